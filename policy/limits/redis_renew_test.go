package limits

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisRenewalsShareARoundTrip: a node's leases and holds are kept
// alive together, one pipelined round trip per tick for all of them, by
// one goroutine, which ends when nothing is left to renew.
func TestRedisRenewalsShareARoundTrip(t *testing.T) {
	c := testRedisClient(t)
	runsRenew := func(cmd redis.Cmder) bool {
		args := cmd.Args()
		return cmd.Name() == "evalsha" && len(args) > 1 && args[1] == renewScript.Hash()
	}
	trips := &tripCounter{counts: runsRenew}
	c.AddHook(trips)
	const ttl = 300 * time.Millisecond
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: ttl})
	renewed := make(chan bool, 1000)
	l.onRenew = func(kept bool) { renewed <- kept }
	ctx := context.Background()

	const streams = 20
	goroutines := runtime.NumGoroutine()
	var held []Admission
	for range streams {
		a, err := l.Admit(ctx, AdmitRequest{Key: "k", StreamLimit: streams, WantLease: true,
			Reserve: Reservation{Account: "acct", Balance: 1000, Want: 10, Min: 1}})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, a)
	}
	if n := runtime.NumGoroutine() - goroutines; n > streams/2 {
		t.Errorf("%d streams with a lease and a hold each started %d goroutines", streams, n)
	}

	// Two TTLs: only renewals keep the slots and the money held.
	time.Sleep(2*ttl + ttl/6)
	if _, err := l.Admit(ctx, AdmitRequest{Key: "k", StreamLimit: streams, WantLease: true}); err == nil {
		t.Fatal("a slot was free two TTLs after all were taken: the leases were not renewed")
	}
	_, err := l.Admit(ctx, AdmitRequest{Key: "other", Reserve: Reservation{Account: "acct", Balance: 1000, Want: 1000, Min: 1000}})
	if be := (*BalanceError)(nil); !errors.As(err, &be) || be.Available != 1000-streams*10 {
		t.Fatalf("two TTLs on: %v, want %d cents available: the holds were not renewed", err, 1000-streams*10)
	}
	ticks := trips.n.Load()
	if ticks < 4 || ticks > 8 {
		t.Errorf("%d renewal round trips in about 7 ticks, want one a tick for all %d leases and holds", ticks, 2*streams)
	}
	for n := len(renewed); n > 0; n-- {
		if !<-renewed {
			t.Fatal("a renewal lost what it renewed")
		}
	}

	for _, a := range held {
		a.Lease.Release()
		a.Hold.Release()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.renewals.mu.Lock()
		running := l.renewals.running
		l.renewals.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the renewing goroutine still runs with nothing to renew")
		}
		time.Sleep(ttl / 6)
	}
}
