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
// renewals each carried, and, for each that Redis answered, the "now"
// argument its renewals carried and how many of them Redis kept.
type renewTrips struct {
	mu    sync.Mutex
	sizes []int
	done  []renewTrip
}

// renewTrip is one answered renewal round trip.
type renewTrip struct {
	now  string // the scripts' "now" of every renewal in it, or "mixed"
	kept int
}

func (h *renewTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func renewCmds(cmds []redis.Cmder) []redis.Cmder {
	return slices.DeleteFunc(slices.Clone(cmds), func(c redis.Cmder) bool { return !runs(renewScript)(c) })
}

func (h *renewTrips) record(cmds []redis.Cmder) {
	if n := len(renewCmds(cmds)); n > 0 {
		h.mu.Lock()
		h.sizes = append(h.sizes, n)
		h.mu.Unlock()
	}
}

// answered records a round trip Redis answered.
func (h *renewTrips) answered(cmds []redis.Cmder) {
	renews := renewCmds(cmds)
	if len(renews) == 0 {
		return
	}
	trip := renewTrip{now: renewNow(renews[0])}
	for _, c := range renews {
		if renewNow(c) != trip.now {
			trip.now = "mixed"
		}
		if n, err := c.(*redis.Cmd).Int(); err == nil && n == 1 {
			trip.kept++
		}
	}
	h.mu.Lock()
	h.done = append(h.done, trip)
	h.mu.Unlock()
}

// renewNow is the "now" argument of a renewal: EVALSHA sha numkeys
// keys... now member ttl.
func renewNow(c redis.Cmder) string {
	args := c.Args()
	if len(args) < 3 {
		return ""
	}
	numKeys, ok := args[2].(int)
	if !ok || len(args) <= 3+numKeys {
		return ""
	}
	now, _ := args[3+numKeys].(string)
	return now
}

// keptAt reports whether a round trip Redis answered kept n renewals,
// all made at now.
func (h *renewTrips) keptAt(now string, n int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(h.done, renewTrip{now: now, kept: n})
}

func (h *renewTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record([]redis.Cmder{cmd})
		err := next(ctx, cmd)
		if err == nil {
			h.answered([]redis.Cmder{cmd})
		}
		return err
	}
}

func (h *renewTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.record(cmds)
		err := next(ctx, cmds)
		if err == nil {
			h.answered(cmds)
		}
		return err
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
// runs the ticks. The clock moves only once a round trip Redis answered
// renewed everything at the clock's time: counting renewals instead
// would count a tick that read the clock before it moved, and the
// leases would expire at the next step without any defect. The calls'
// timeout is wide, as it is not what is tested: a renewal that timed
// out on a loaded machine is tried again for part of the batch only.
func TestRedisRenewalsShareARoundTrip(t *testing.T) {
	c := testRedisClient(t)
	trips := new(renewTrips)
	c.AddHook(trips)
	clock := newFakeClock()
	const ttl = 30 * time.Second
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: ttl, Now: clock.Now,
		Timeout: 5 * time.Second})
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
		now := l.nowArg()
		for deadline := time.Now().Add(10 * time.Second); !trips.keptAt(now, 2*streams); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: no round trip renewed all %d leases and holds at the clock's time in 10s (%d renewals kept in all)",
					step, 2*streams, renewed())
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
