package limits

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// The Redis Cluster suite: a cluster of three primaries and three
// replicas, started by each test (testenv.StartRedisCluster), with the
// client the gateway builds for `redis_mode cluster`.

// clusterLimiter returns a limiter on the cluster behind url (cluster or
// sentinel mode), and the client it uses.
func clusterLimiter(t *testing.T, url string, mode RedisMode, cfg RedisConfig) (*Redis, redis.UniversalClient) {
	t.Helper()
	client, err := NewRedisClient(url, mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	cfg.Client = client
	if cfg.Prefix == "" {
		cfg.Prefix = "sytest:"
	}
	l := newTestRedis(t, cfg)
	t.Cleanup(l.Flush)
	return l, client
}

// primaryOf is the address of the primary serving key's slot.
func primaryOf(t *testing.T, c redis.UniversalClient, key string) string {
	t.Helper()
	p, err := c.(*redis.ClusterClient).MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p.Options().Addr
}

func TestClusterAdmission(t *testing.T) {
	cluster := testenv.StartRedisCluster(t)
	l, c := clusterLimiter(t, cluster.URL(), RedisCluster, RedisConfig{RatePolicy: FailClosed, StreamPolicy: FailClosed})
	ctx := context.Background()

	// Accounts spread over the primaries: one admission's keys share
	// the account's slot, different accounts use different primaries.
	primaries := map[string]bool{}
	for i := range 12 {
		account := fmt.Sprintf("acct-%d", i)
		primaries[primaryOf(t, c, l.balanceKey(account))] = true
		for _, k := range []string{l.windowKey(account, "k"), l.logKey(account, "k"), l.gcraKey(account, "k"), l.leaseKey(account, "k"), l.holdsKey(account), l.balanceKey(account)} {
			if got, want := primaryOf(t, c, k), primaryOf(t, c, l.balanceKey(account)); got != want {
				t.Fatalf("%s is on %s, the account's balance on %s", k, got, want)
			}
		}
		// Rate, slot and hold in one script: refused as cross-slot if
		// the keys were in different slots.
		rate := Rate{Limit: 2, Period: time.Minute, Rolling: i%2 == 0}
		req := AdmitRequest{Key: "k", Account: account, Rate: rate, StreamLimit: 1, WantLease: true,
			Reserve: Reservation{Account: account, Balance: 100, Want: 30, Min: 1}}
		first, err := l.Admit(ctx, req)
		if err != nil || first.Fallback || first.Lease == nil || first.Hold == nil || first.Hold.Cents() != 30 {
			t.Fatalf("%s: first admission %+v, %v", account, first, err)
		}
		// The slot is taken: a second stream is refused and spends no rate.
		if _, err := l.Admit(ctx, req); !refusedBy(err, LimitStreams) {
			t.Fatalf("%s: second stream: %v, want the streams limit", account, err)
		}
		// The same key without a stream or a reservation counts against the
		// same rate: it lives under the account's tag either way.
		if _, err := l.Admit(ctx, AdmitRequest{Key: "k", Account: account, Rate: rate}); err != nil {
			t.Fatalf("%s: second request: %v", account, err)
		}
		if _, err := l.Admit(ctx, AdmitRequest{Key: "k", Account: account, Rate: rate}); !refusedBy(err, LimitRequests) {
			t.Fatalf("%s: third request of a rate of 2: %v, want the rate limit", account, err)
		}
		held, err := l.Held(ctx, account)
		if err != nil || held != 30 {
			t.Fatalf("%s: held %d, %v; want 30", account, held, err)
		}
		first.Hold.Settle(20)
		first.Lease.Release()
	}
	if len(primaries) != 3 {
		t.Errorf("12 accounts on %d primaries, want all 3", len(primaries))
	}
	l.Flush()
	for i := range 12 {
		account := fmt.Sprintf("acct-%d", i)
		if n := c.ZCard(ctx, l.leaseKey(account, "k")).Val(); n != 0 {
			t.Errorf("%s: %d slots still taken after the release", account, n)
		}
		if bal := c.HGet(ctx, l.balanceKey(account), "bal").Val(); bal != "80" {
			t.Errorf("%s: mirrored balance %s after a charge of 20 on 100, want 80", account, bal)
		}
	}

	// Reconciling walks every primary's mirrors.
	res, err := l.ReconcileBalances(ctx, func(_ context.Context, account string) (int64, error) { return 50, nil })
	if err != nil || res.Mirrors != 12 || res.Lowered != 12 {
		t.Fatalf("reconcile: %+v, %v; want 12 mirrors on 3 primaries, all lowered", res, err)
	}

	// A key named under two accounts is refused, not run as cross-slot.
	_, err = l.Admit(ctx, AdmitRequest{Key: "k", Account: "acct-0", Reserve: Reservation{Account: "acct-1", Balance: 10, Want: 1}})
	if err == nil || !strings.Contains(err.Error(), "cannot reserve") {
		t.Fatalf("a reservation from another account than the key's: %v", err)
	}
}

func refusedBy(err error, kind string) bool {
	le, ok := errors.AsType[*LimitError](err)
	return ok && le.Limit == kind
}
