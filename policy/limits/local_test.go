package limits

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestLocal(t *testing.T) {
	runSuite(t, func(t *testing.T) harness {
		clock := newFakeClock()
		l := NewLocal(LocalConfig{Now: clock.Now})
		return harness{clock: clock, node: func(*testing.T) Limiter { return l }}
	})
}

func TestLocalForgetsIdleKeys(t *testing.T) {
	clock := newFakeClock()
	l := NewLocal(LocalConfig{Now: clock.Now})
	sweep := func() {
		for i := range l.shards {
			sh := &l.shards[i]
			sh.mu.Lock()
			sh.sweep(l.nanos())
			sh.mu.Unlock()
		}
	}
	for i := range 1000 {
		allow(t, l, fmt.Sprint("gcra", i), Rate{Limit: 10, Period: time.Minute})
	}
	allow(t, l, "rolling", Rate{Limit: 10, Period: 2 * time.Minute, Rolling: true})
	held := acquire(t, l, "leased", 1)

	tests := []struct {
		name    string
		advance time.Duration
		release bool
		want    int
	}{
		{name: "all active", want: 1002},
		{name: "GCRA budgets full again", advance: 6 * time.Second, want: 2},
		{name: "rolling window empty", advance: 2 * time.Minute, want: 1},
		{name: "lease released", release: true, want: 0},
	}
	for _, tt := range tests {
		clock.Advance(tt.advance)
		if tt.release {
			held.Release()
		}
		sweep()
		if n := l.Len(); n != tt.want {
			t.Fatalf("%s: %d keys held, want %d", tt.name, n, tt.want)
		}
	}
}

// TestLocalHoldsExpireWhateverTheirOrder: an admission looks for expired
// holds only once the earliest of them may have expired, and that bound
// follows the holds as they are taken, settled and found still held.
func TestLocalHoldsExpireWhateverTheirOrder(t *testing.T) {
	clock := newFakeClock()
	l := NewLocal(LocalConfig{Now: clock.Now})
	a := mustHold(t, l, 100, 10, 10) // expires at 30s
	clock.Advance(10 * time.Second)
	b := mustHold(t, l, 100, 10, 10) // 40s
	a.Release()
	clock.Advance(10 * time.Second)
	c := mustHold(t, l, 100, 10, 10) // 50s
	b.abandon()                      // no longer held, not freed: as after a crash
	wantHeld(t, l, 20)

	clock.Advance(11 * time.Second) // 31s: a's expiry is past, but a is gone
	mustHold(t, l, 100, 1, 1).Release()
	wantHeld(t, l, 20)
	clock.Advance(10 * time.Second) // 41s: b expired
	wantHeld(t, l, 10)
	clock.Advance(10 * time.Second) // 51s: c expired, but is still held: renewed
	wantHeld(t, l, 10)
	c.Settle(3)
	wantHeld(t, l, 0)
}

// In process Precheck knows what requests in flight hold: an account
// whose balance they hold is refused before a body is read.
func TestLocalPrecheckSeesTheHolds(t *testing.T) {
	l := NewLocal(LocalConfig{})
	check := AdmitRequest{Key: "k", Reserve: Reservation{Account: "acct", Balance: 10, Min: 1, CheckOnly: true}}
	if _, err := l.Precheck(check); err != nil {
		t.Fatalf("10 cents free: %v", err)
	}
	hold := mustHold(t, l, 10, 10, 10)
	var be *BalanceError
	if _, err := l.Precheck(check); !errors.As(err, &be) || be.Available != 0 {
		t.Fatalf("all 10 held: %v, want a balance refusal with nothing available", err)
	}
	hold.Release()
	if _, err := l.Precheck(check); err != nil {
		t.Fatalf("released: %v", err)
	}
}
