package limits

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
)

// The shared suite: every Limiter implementation runs it (local_test.go,
// redis_test.go), so that the in-process limiter and the Redis limiter
// behave the same.

// harness gives the suite a limiter implementation on a fake clock.
type harness struct {
	clock *fakeclock.Clock
	// node returns a limiter sharing state with every other node of the
	// same harness, as gateway nodes in front of one store do.
	node func(t *testing.T) Limiter
}

// runSuite runs the suite; newHarness is called once per test.
func runSuite(t *testing.T, newHarness func(t *testing.T) harness) {
	tests := []struct {
		name string
		run  func(t *testing.T, h harness)
	}{
		{"GCRABurstAndRefill", testGCRABurstAndRefill},
		{"GCRASmallBurst", testGCRASmallBurst},
		{"RefusalConsumesNothing", testRefusalConsumesNothing},
		{"RollingWindow", testRollingWindow},
		{"RollingNeverExceedsWindow", testRollingNeverExceedsWindow},
		{"RollingPromise", testRollingPromise},
		{"RateOptionAdmitsMore", testRateOptionAdmitsMore},
		{"NoRate", testNoRate},
		{"Leases", testLeases},
		{"LeaseReleaseIdempotent", testLeaseReleaseIdempotent},
		{"LeaseReleasedOnCancel", testLeaseReleasedOnCancel},
		{"AdmitRateRefusalTakesNoLease", testAdmitRateRefusalTakesNoLease},
		{"AdmitStreamRefusalSpendsNoRate", testAdmitStreamRefusalSpendsNoRate},
		{"NodesShareLimits", testNodesShareLimits},
		{"CanceledContext", testCanceledContext},
		{"ReserveHoldsAndRefuses", testReserveHoldsAndRefuses},
		{"ReserveRefusalConsumesNothing", testReserveRefusalConsumesNothing},
		{"ReserveRateRefusalHoldsNothing", testReserveRateRefusalHoldsNothing},
		{"ReserveSettle", testReserveSettle},
		{"ReserveHandover", testReserveHandover},
		{"ReserveRelease", testReserveRelease},
		{"ReserveTopUp", testReserveTopUp},
		{"ReserveDebit", testReserveDebit},
		{"ReserveHoldExpires", testReserveHoldExpires},
		{"ReserveHeld", testReserveHeld},
		{"ReserveMirrorExpires", testReserveMirrorExpires},
		{"ReserveConcurrent", testReserveConcurrent},
		{"ReserveCheckOnly", testReserveCheckOnly},
		{"PrecheckBalance", testPrecheckBalance},
		{"PrecheckKnownSpentRate", testPrecheckKnownSpentRate},
		{"KeySpendLimit", testKeySpendLimit},
		{"KeySpendConcurrent", testKeySpendConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newHarness(t)) })
	}
}

// Redis keeps times as float seconds, about a microsecond apart from the
// exact value; the in-process limiter is exact.
const slack = 2 * time.Millisecond

func near(got, want time.Duration) bool { return got >= want-slack && got <= want+slack }

func allow(t *testing.T, l RateLimiter, key string, r Rate) RateResult {
	t.Helper()
	res, err := l.Allow(context.Background(), key, r)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	return res
}

func testGCRABurstAndRefill(t *testing.T, h harness) {
	l := h.node(t)
	r := Rate{Limit: 150, Period: time.Minute, Burst: 150}
	for i := range 150 {
		res := allow(t, l, "k", r)
		if !res.Allowed || res.Remaining != 149-i || res.Limit != 150 {
			t.Fatalf("request %d: %+v, want allowed with %d remaining", i+1, res, 149-i)
		}
	}
	res := allow(t, l, "k", r)
	if res.Allowed || res.Remaining != 0 || !near(res.RetryAfter, 400*time.Millisecond) || !near(res.ResetAfter, time.Minute) {
		t.Fatalf("request 151: %+v, want refused, retry after 400ms, reset after 1m", res)
	}
	h.clock.Advance(400 * time.Millisecond)
	if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 0 {
		t.Fatalf("after 400ms: %+v, want one more allowed", res)
	}
	if res := allow(t, l, "k", r); res.Allowed {
		t.Fatalf("second after 400ms: %+v, want refused", res)
	}
	h.clock.Advance(time.Minute)
	if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 149 {
		t.Fatalf("after a quiet minute: %+v, want full budget", res)
	}
}

func testGCRASmallBurst(t *testing.T, h harness) {
	l := h.node(t)
	r := Rate{Limit: 60, Period: time.Minute, Burst: 10}
	for i := range 10 {
		if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 9-i {
			t.Fatalf("request %d: %+v", i+1, res)
		}
	}
	res := allow(t, l, "k", r)
	if res.Allowed || !near(res.RetryAfter, time.Second) || !near(res.ResetAfter, 10*time.Second) {
		t.Fatalf("request 11: %+v, want refused, retry after 1s, reset after 10s", res)
	}
	// Sustained: one per emission interval.
	for i := range 5 {
		h.clock.Advance(time.Second)
		if res := allow(t, l, "k", r); !res.Allowed {
			t.Fatalf("paced request %d: %+v", i+1, res)
		}
	}
}

func testRefusalConsumesNothing(t *testing.T, h harness) {
	l := h.node(t)
	r := Rate{Limit: 2, Period: time.Hour}
	allow(t, l, "k", r)
	allow(t, l, "k", r)
	first := allow(t, l, "k", r)
	for range 20 {
		if res := allow(t, l, "k", r); res.Allowed || !near(res.RetryAfter, first.RetryAfter) {
			t.Fatalf("refused request: %+v, want refused with retry after %s as before", res, first.RetryAfter)
		}
	}
	h.clock.Advance(first.RetryAfter)
	if res := allow(t, l, "k", r); !res.Allowed {
		t.Fatalf("after RetryAfter: %+v, want allowed: refusals must not push it back", res)
	}
}

func testRollingWindow(t *testing.T, h harness) {
	l := h.node(t)
	r := Rate{Limit: 5, Period: time.Minute, Rolling: true}
	for range 3 {
		allow(t, l, "k", r)
	}
	h.clock.Advance(30 * time.Second)
	for i := range 2 {
		if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 1-i || !near(res.ResetAfter, time.Minute) {
			t.Fatalf("at 30s, request %d: %+v", i+1, res)
		}
	}
	res := allow(t, l, "k", r)
	if res.Allowed || !near(res.RetryAfter, 30*time.Second) || !near(res.ResetAfter, time.Minute) {
		t.Fatalf("6th request: %+v, want refused, retry after 30s, reset after 1m", res)
	}
	h.clock.Advance(30*time.Second - time.Millisecond)
	if res := allow(t, l, "k", r); res.Allowed || !near(res.RetryAfter, time.Millisecond) {
		t.Fatalf("1ms before the window slides: %+v, want refused, retry after 1ms", res)
	}
	h.clock.Advance(time.Millisecond)
	for i := range 3 {
		if res := allow(t, l, "k", r); !res.Allowed {
			t.Fatalf("at 60s, request %d: %+v, want the first three slots free", i+1, res)
		}
	}
	if res := allow(t, l, "k", r); res.Allowed || !near(res.RetryAfter, 30*time.Second) {
		t.Fatalf("at 60s, 4th request: %+v, want refused until the 30s requests leave", res)
	}
}

// testRollingNeverExceedsWindow throws random traffic at a rolling limit
// and checks the spec's promise: never more than Limit in any window.
func testRollingNeverExceedsWindow(t *testing.T, h harness) {
	l := h.node(t)
	r := Rate{Limit: 10, Period: 10 * time.Second, Rolling: true}
	rng := rand.New(rand.NewPCG(1, 2))
	var admitted []time.Time
	for range 400 {
		h.clock.Advance(time.Duration(rng.IntN(600)) * time.Millisecond)
		if allow(t, l, "k", r).Allowed {
			admitted = append(admitted, h.clock.Now())
		}
	}
	if len(admitted) < 100 {
		t.Fatalf("only %d of 400 admitted over %s: limiter too strict", len(admitted), 400*300*time.Millisecond)
	}
	for i := range admitted {
		// admitted[i+Limit] must be at least Period after admitted[i].
		if j := i + r.Limit; j < len(admitted) && admitted[j].Sub(admitted[i]) < r.Period {
			t.Fatalf("%d requests within %s (from %s to %s)", r.Limit+1, admitted[j].Sub(admitted[i]), admitted[i], admitted[j])
		}
	}
}

func testNoRate(t *testing.T, h harness) {
	l := h.node(t)
	for range 3 {
		if res := allow(t, l, "k", Rate{}); !res.Allowed || res.Limit != 0 {
			t.Fatalf("zero Rate: %+v, want allowed with no limit reported", res)
		}
	}
}

func acquire(t *testing.T, l Leaser, key string, limit int) *Lease {
	t.Helper()
	lease, err := l.Acquire(context.Background(), key, limit)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if lease == nil {
		t.Fatal("Acquire returned no lease and no error")
	}
	return lease
}

func wantStreamRefusal(t *testing.T, err error, limit int) {
	t.Helper()
	le, ok := errors.AsType[*LimitError](err)
	if !ok || le.Limit != LimitStreams || le.Max != limit {
		t.Fatalf("error %v, want a %s LimitError with Max %d", err, LimitStreams, limit)
	}
}

func testLeases(t *testing.T, h harness) {
	l := h.node(t)
	a := acquire(t, l, "k", 2)
	b := acquire(t, l, "k", 2)
	if a.ID() == b.ID() || a.Key() != "k" {
		t.Fatalf("leases %q and %q of key %q", a.ID(), b.ID(), a.Key())
	}
	lease, err := l.Acquire(context.Background(), "k", 2)
	if lease != nil {
		t.Fatal("third lease granted over a limit of 2")
	}
	wantStreamRefusal(t, err, 2)
	if st := APIError(err); st.Status != 429 || st.Code != "rate_limit_exceeded" {
		t.Fatalf("API error %+v, want 429 rate_limit_exceeded", st)
	}
	acquire(t, l, "other", 1) // keys are independent
	a.Release()
	<-a.Done()
	c := acquire(t, l, "k", 2)
	b.Release()
	c.Release()
	if _, err := l.Acquire(context.Background(), "k", 0); err == nil {
		t.Fatal("Acquire with limit 0 succeeded")
	}
}

func testLeaseReleaseIdempotent(t *testing.T, h harness) {
	l := h.node(t)
	a := acquire(t, l, "k", 2)
	acquire(t, l, "k", 2)
	a.Release()
	a.Release()
	a.Release()
	acquire(t, l, "k", 2)
	_, err := l.Acquire(context.Background(), "k", 2)
	wantStreamRefusal(t, err, 2) // the repeated Release freed one slot, not three

	var nilLease *Lease
	nilLease.Release()
	<-nilLease.Done()
}

func testLeaseReleasedOnCancel(t *testing.T, h harness) {
	l := h.node(t)
	ctx, cancel := context.WithCancel(context.Background())
	lease, err := l.Acquire(ctx, "k", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(context.Background(), "k", 1)
	wantStreamRefusal(t, err, 1)
	cancel()
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lease not released 5s after its context was canceled")
	}
	acquire(t, l, "k", 1)
}

// eachWindow runs f with a fixed and with a rolling window, each on a new
// node and a key of its own.
func eachWindow(t *testing.T, h harness, f func(t *testing.T, l Limiter, key string, rolling bool)) {
	for _, rolling := range []bool{false, true} {
		t.Run(fmt.Sprintf("rolling=%v", rolling), func(t *testing.T) {
			f(t, h.node(t), fmt.Sprint("k", rolling), rolling)
		})
	}
}

func testAdmitRateRefusalTakesNoLease(t *testing.T, h harness) {
	eachWindow(t, h, func(t *testing.T, l Limiter, key string, rolling bool) {
		req := AdmitRequest{Key: key, Rate: Rate{Limit: 1, Period: time.Hour, Rolling: rolling}, StreamLimit: 2, WantLease: true}
		first, err := l.Admit(context.Background(), req)
		if err != nil || first.Lease == nil || !first.Rate.Allowed {
			t.Fatalf("first Admit: %+v, %v", first, err)
		}
		second, err := l.Admit(context.Background(), req)
		le, ok := errors.AsType[*LimitError](err)
		if !ok || le.Limit != LimitRequests || second.Lease != nil || second.Rate.Allowed || second.Rate.RetryAfter <= 0 {
			t.Fatalf("second Admit: %+v, %v; want refused by the rate with no lease", second, err)
		}
		// Only the first request holds a slot.
		acquire(t, l, key, 2)
		_, err = l.Acquire(context.Background(), key, 2)
		wantStreamRefusal(t, err, 2)
	})
}

func testAdmitStreamRefusalSpendsNoRate(t *testing.T, h harness) {
	eachWindow(t, h, func(t *testing.T, l Limiter, key string, rolling bool) {
		req := AdmitRequest{Key: key, Rate: Rate{Limit: 3, Period: time.Hour, Rolling: rolling}, StreamLimit: 1, WantLease: true}
		first, err := l.Admit(context.Background(), req)
		if err != nil || first.Rate.Remaining != 2 {
			t.Fatalf("first Admit: %+v, %v", first, err)
		}
		for range 5 {
			a, err := l.Admit(context.Background(), req)
			wantStreamRefusal(t, err, 1)
			if a.Lease != nil || a.Rate.Allowed || a.Rate.Remaining != 2 || a.Rate.Limit != 3 {
				t.Fatalf("refused Admit: %+v; want 2 requests remaining, untouched", a)
			}
		}
		first.Lease.Release()
		third, err := l.Admit(context.Background(), req)
		if err != nil || third.Rate.Remaining != 1 {
			t.Fatalf("Admit after release: %+v, %v; want 1 remaining", third, err)
		}
		third.Lease.Release()
		noLease, err := l.Admit(context.Background(), AdmitRequest{Key: key, Rate: req.Rate})
		if err != nil || noLease.Lease != nil || noLease.Rate.Remaining != 0 {
			t.Fatalf("Admit without lease: %+v, %v", noLease, err)
		}
	})
}

func testNodesShareLimits(t *testing.T, h harness) {
	n1, n2 := h.node(t), h.node(t)
	r := Rate{Limit: 4, Period: time.Hour}
	for _, l := range []Limiter{n1, n2, n1, n2} {
		if res := allow(t, l, "k", r); !res.Allowed {
			t.Fatalf("%+v", res)
		}
	}
	for _, l := range []Limiter{n1, n2} {
		if res := allow(t, l, "k", r); res.Allowed {
			t.Fatal("a node admitted a 5th request of 4: limits multiplied by nodes")
		}
	}
	acquire(t, n1, "s", 2)
	acquire(t, n2, "s", 2)
	_, err := n1.Acquire(context.Background(), "s", 2)
	wantStreamRefusal(t, err, 2)
}

func testCanceledContext(t *testing.T, h harness) {
	l := h.node(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Admit(ctx, AdmitRequest{Key: "k", Rate: Rate{Limit: 1, Period: time.Hour}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Admit with a canceled context: %v", err)
	}
	if res := allow(t, l, "k", Rate{Limit: 1, Period: time.Hour}); !res.Allowed {
		t.Fatal("the canceled request consumed the budget")
	}
}
