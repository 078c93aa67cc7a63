package limits

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// reserveFor holds want against account's balance, as a request of it.
func reserveFor(t *testing.T, l Admitter, account string, ledger, want int64) *Hold {
	t.Helper()
	a, err := l.Admit(context.Background(), AdmitRequest{
		Key:     "k-" + account,
		Rate:    Rate{Limit: 100, Period: time.Minute},
		Reserve: Reservation{Account: account, Balance: ledger, Want: want, Min: 1},
	})
	if err != nil {
		t.Fatalf("reserve %d of %s's %d: %v", want, account, ledger, err)
	}
	return a.Hold
}

// TestRedisReconcileBalances: a node killed after committing charges but
// before settling their holds left them out of the mirror; the sweep of
// a starting node takes them in, touches no mirror that is not above the
// ledger, and no other deployment's.
func TestRedisReconcileBalances(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	crashed := newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, LeaseTTL: time.Hour})
	other := newTestRedis(t, RedisConfig{Client: c, Prefix: prefix + "other*", LeaseTTL: time.Hour})

	// "spent": 100 in the ledger, 30 committed by the crashed node, whose
	// hold was never settled. "topped": its mirror is below the ledger (a
	// credit not taken in yet). "unreadable": the ledger read fails.
	ledger := map[string]int64{"spent": 70, "topped": 500, "fine": 40}
	reserveFor(t, crashed, "spent", 100, 30).abandon()
	reserveFor(t, crashed, "topped", 10, 5).Settle(5)
	reserveFor(t, crashed, "fine", 40, 1).Release()
	reserveFor(t, crashed, "unreadable", 60, 1).Release()
	reserveFor(t, other, "spent", 100, 1).Release()

	var mu sync.Mutex
	var asked []string
	read := func(_ context.Context, account string) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, account)
		b, ok := ledger[account]
		if !ok {
			return 0, errors.New("no such account")
		}
		return b, nil
	}
	// Two nodes start at once.
	starting := []*Redis{
		newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, LeaseTTL: time.Hour}),
		newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, LeaseTTL: time.Hour}),
	}
	results := make([]ReconcileResult, 2)
	var wg sync.WaitGroup
	for i, n := range starting {
		wg.Go(func() {
			var err error
			if results[i], err = n.ReconcileBalances(context.Background(), read); err != nil {
				t.Errorf("ReconcileBalances: %v", err)
			}
		})
	}
	wg.Wait()
	lowered := results[0].Lowered + results[1].Lowered
	for _, res := range results {
		if res.Mirrors != 4 || res.Skipped != 1 {
			t.Errorf("result %+v; want 4 mirrors of this deployment, 1 unreadable", res)
		}
	}
	if lowered != 1 {
		t.Errorf("%d mirrors lowered in all, want 1 (spent)", lowered)
	}
	if len(asked) != 8 {
		t.Errorf("ledger read for %v; want each of the 4 accounts once per node", asked)
	}

	bal := func(l *Redis, account string) string {
		return c.HGet(context.Background(), l.balanceKey(account), "bal").Val()
	}
	for account, want := range map[string]string{"spent": "70", "topped": "5", "fine": "40", "unreadable": "60"} {
		if got := bal(crashed, account); got != want {
			t.Errorf("%s's mirror %s, want %s", account, got, want)
		}
	}
	if got := bal(other, "spent"); got != "100" {
		t.Errorf("another deployment's mirror became %s", got)
	}
	// The crashed node's 30 cents stay held until the hold expires: the
	// account has 40 to spend now, not 70.
	mustHoldFor := reserveFor(t, starting[0], "spent", 70, 100)
	if mustHoldFor.Cents() != 40 {
		t.Errorf("held %d after the sweep, want the 40 left beside the dead node's hold", mustHoldFor.Cents())
	}
}
