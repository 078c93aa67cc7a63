package limits

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// renewTrips records the renewal round trips of a client: how many
// renewals each carried.
type renewTrips struct {
	mu    sync.Mutex
	sizes []int
}

func (h *renewTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *renewTrips) record(cmds []redis.Cmder) {
	if n := len(slices.DeleteFunc(slices.Clone(cmds), func(c redis.Cmder) bool { return !runs(renewScript)(c) })); n > 0 {
		h.mu.Lock()
		h.sizes = append(h.sizes, n)
		h.mu.Unlock()
	}
}

func (h *renewTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *renewTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.record(cmds)
		return next(ctx, cmds)
	}
}

func (h *renewTrips) taken() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sizes)
}

// TestRedisRenewalsShareARoundTrip: a node's leases and holds are kept
// alive together, one pipelined round trip per tick for all of them, by
// one goroutine, which ends when nothing is left to renew.
//
// Expiry follows an injected clock, moved by a lease TTL and a half in
// steps while the renewals tick every 20ms of real time: only renewals
// can keep the slots and the money held, however slowly a loaded machine
// runs the ticks.
func TestRedisRenewalsShareARoundTrip(t *testing.T) {
	c := testRedisClient(t)
	trips := new(renewTrips)
	c.AddHook(trips)
	clock := newFakeClock()
	const ttl = 30 * time.Second
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: ttl, Now: clock.Now})
	l.renewEvery = 20 * time.Millisecond
	var mu sync.Mutex
	kept, lost := 0, 0
	l.onRenew = func(ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if ok {
			kept++
		} else {
			lost++
		}
	}
	renewed := func() int {
		mu.Lock()
		defer mu.Unlock()
		return kept
	}
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
	// Ticks while the streams were admitted renewed those admitted so
	// far; one of them may still be on its way.
	since := len(trips.taken()) + 1

	// Each step, once every lease and hold was renewed at the clock's
	// time, moves the clock half a TTL: past the first TTL and a half,
	// what was taken at the start has expired unless renewed since.
	for step := range 3 {
		want := renewed() + 2*streams
		for deadline := time.Now().Add(10 * time.Second); renewed() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: %d renewals in 10s, want %d", step, renewed(), want)
			}
		}
		clock.Advance(ttl / 2)
	}
	if _, err := l.Admit(ctx, AdmitRequest{Key: "k", Account: "acct", StreamLimit: streams, WantLease: true}); err == nil {
		t.Fatal("a slot was free a TTL and a half after all were taken: the leases were not renewed")
	}
	_, err := l.Admit(ctx, AdmitRequest{Key: "other", Reserve: Reservation{Account: "acct", Balance: 1000, Want: 1000, Min: 1000}})
	if be := (*BalanceError)(nil); !errors.As(err, &be) || be.Available != 1000-streams*10 {
		t.Fatalf("a TTL and a half on: %v, want %d cents available: the holds were not renewed", err, 1000-streams*10)
	}
	// Every round trip since renewed all of them.
	sizes := trips.taken()[since:]
	if len(sizes) < 2 {
		t.Fatalf("%d renewal round trips, want one a tick", len(sizes))
	}
	for i, n := range sizes {
		if n != 2*streams {
			t.Fatalf("renewal round trip %d carried %d renewals, want all %d leases and holds", i, n, 2*streams)
		}
	}
	mu.Lock()
	if lost > 0 {
		t.Errorf("the renewals lost %d of what they renewed", lost)
	}
	mu.Unlock()

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
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedisFailedRenewalTriedBeforeTheNextTick: a renewal round trip that
// fails is tried again after a short pause (20ms), not a whole tick (2s
// here) later.
func TestRedisFailedRenewalTriedBeforeTheNextTick(t *testing.T) {
	h := &failHook{match: runs(renewScript)}
	l := failingRedis(t, h)
	const tick = 2 * time.Second
	l.renewEvery = tick
	renewed := make(chan time.Time, 100)
	l.onRenew = func(kept bool) {
		if kept {
			renewed <- time.Now()
		}
	}
	h.armed.Store(1)
	lease := acquire(t, l, "k", 1)
	defer lease.Release()
	for deadline := time.Now().Add(3 * tick); h.hit.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no renewal was tried")
		}
	}
	failed := time.Now()
	select {
	case at := <-renewed:
		if d := at.Sub(failed); d > tick/2 {
			t.Fatalf("the failed renewal succeeded %v after it failed, at the next tick: it was not tried again", d)
		}
	case <-time.After(3 * tick):
		t.Fatal("a failed renewal was not tried again")
	}
}
