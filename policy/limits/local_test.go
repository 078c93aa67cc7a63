package limits

import (
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
	l := NewLocal(LocalConfig{Now: clock.Now, SweepEvery: time.Minute})
	gcra := Rate{Limit: 10, Period: time.Minute}
	rolling := Rate{Limit: 10, Period: 2 * time.Minute, Rolling: true}
	for i := range 1000 {
		allow(t, l, "gcra"+string(rune('a'+i%26))+string(rune(i)), gcra)
	}
	allow(t, l, "rolling", rolling)
	held := acquire(t, l, "leased", 1)
	if n := l.Len(); n != 1002 {
		t.Fatalf("%d keys held, want 1002", n)
	}
	// Sweeps run per shard on access; touch every shard.
	touchAll := func() {
		for i := range 4096 {
			allow(t, l, "touch"+string(rune(i)), Rate{})
		}
	}
	clock.Advance(61 * time.Second)
	touchAll()
	if n := l.Len(); n > 4096+2 {
		t.Fatalf("%d keys held after the GCRA keys went idle, want only recent ones", n)
	}
	clock.Advance(61 * time.Second)
	touchAll()
	if n := l.Len(); n != 4096+1 {
		t.Fatalf("%d keys held, want the touched ones and the leased key", n)
	}
	held.Release()
	clock.Advance(61 * time.Second)
	allow(t, l, "x", Rate{})
	clock.Advance(61 * time.Second)
	touchAll()
	if n := l.Len(); n != 4096 {
		t.Fatalf("%d keys held, want only the last touched", n)
	}
}
