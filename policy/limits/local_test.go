package limits

import (
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
