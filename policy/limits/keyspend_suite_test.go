package limits

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Key spend limits in the shared suite (runSuite), against Local and
// Redis.

func spendReq(key, period string, limit, spent, want int64) AdmitRequest {
	return AdmitRequest{
		Key:  key,
		Rate: Rate{Limit: 1000, Period: time.Minute},
		Reserve: Reservation{Account: "acct", Balance: 1_000_000, Want: want, Min: 1,
			KeySpend: KeySpend{Key: key, Period: period, Limit: limit, Spent: spent}},
	}
}

func wantSpendRefusal(t *testing.T, err error, status int) {
	t.Helper()
	var se *SpendLimitError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a spend limit refusal", err)
	}
	if ae := APIError(err); ae.Status != status || ae.Code != "key_spend_limit_reached" {
		t.Fatalf("API error %d %s, want %d key_spend_limit_reached", ae.Status, ae.Code, status)
	}
}

func testKeySpendLimit(t *testing.T, h harness) {
	l := h.node(t)
	ctx := context.Background()
	admit := func(period string, spent, want int64) (*Hold, error) {
		a, err := l.Admit(ctx, spendReq("key_a", period, 10, spent, want))
		return a.Hold, err
	}
	first, err := admit("d1", 0, 4)
	if err != nil || first.Cents() != 4 {
		t.Fatalf("first hold: %v, %v", first.Cents(), err)
	}
	second, err := admit("d1", 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	// 8 held of 10: the estimate of 4 does not fit while they are in flight.
	_, err = admit("d1", 0, 4)
	wantSpendRefusal(t, err, 429)

	first.Settle(3)
	second.Settle(4)
	settled(l)
	// 7 spent: a 4-cent estimate is refused for good, a 3-cent one fits.
	_, err = admit("d1", 0, 4)
	wantSpendRefusal(t, err, 402)
	third, err := admit("d1", 0, 3)
	if err != nil {
		t.Fatalf("an estimate that fits exactly: %v", err)
	}
	third.Release()
	settled(l)

	// Another key of the account has its own spend.
	if a, err := l.Admit(ctx, spendReq("key_b", "d1", 10, 0, 10)); err != nil {
		t.Fatalf("another key: %v", err)
	} else {
		a.Hold.Release()
	}
	// The store's spend, when larger, counts (another process's charges).
	_, err = admit("d1", 9, 2)
	wantSpendRefusal(t, err, 402)
	// A new period starts from what the store says of it.
	h4, err := admit("d2", 0, 10)
	if err != nil {
		t.Fatalf("a new period: %v", err)
	}
	h4.Release()
	// A check before the body refuses a key already at its limit.
	req := spendReq("key_a", "d2", 10, 10, 0)
	req.Reserve.CheckOnly = true
	_, err = l.Admit(ctx, req)
	wantSpendRefusal(t, err, 402)
	if _, err := l.Precheck(req); err == nil {
		t.Fatal("Precheck admitted a key at its spend limit")
	}
}

// testKeySpendConcurrent: concurrent requests of one key, each holding 5
// cents under a 100-cent limit, are admitted 20 times and no more, and
// once charged the key is refused.
func testKeySpendConcurrent(t *testing.T, h harness) {
	nodes := []Limiter{h.node(t), h.node(t)}
	var mu sync.Mutex
	var holds []*Hold
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			a, err := nodes[i%2].Admit(context.Background(), spendReq("key_c", "m1", 100, 0, 5))
			if err == nil {
				mu.Lock()
				holds = append(holds, a.Hold)
				mu.Unlock()
			} else if !errors.As(err, new(*SpendLimitError)) {
				t.Errorf("admission %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(holds) != 20 {
		t.Fatalf("%d admitted under a 100-cent limit at 5 cents each, want 20", len(holds))
	}
	for _, hd := range holds {
		hd.Settle(5)
	}
	for _, n := range nodes {
		settled(n)
	}
	_, err := nodes[1].Admit(context.Background(), spendReq("key_c", "m1", 100, 0, 1))
	wantSpendRefusal(t, err, 402)
}
