package limits

import (
	"testing"
	"time"
)

func TestBreaker(t *testing.T) {
	type step struct {
		advance   time.Duration
		result    outcome // of the call, when allowed
		wantAllow bool
		wantOpen  bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "opens after consecutive failures only",
			steps: []step{
				{result: failed, wantAllow: true},
				{result: succeeded, wantAllow: true},
				{result: failed, wantAllow: true},
				{result: failed, wantAllow: true, wantOpen: true},
				{wantAllow: false, wantOpen: true},
			},
		},
		{
			name: "cool-down doubles up to the cap, success closes",
			steps: []step{
				{result: failed, wantAllow: true},
				{result: failed, wantAllow: true, wantOpen: true},
				{advance: 999 * time.Millisecond, wantOpen: true},
				{advance: time.Millisecond, result: failed, wantAllow: true, wantOpen: true}, // probe; 2s
				{advance: 1999 * time.Millisecond, wantOpen: true},
				{advance: time.Millisecond, result: failed, wantAllow: true, wantOpen: true}, // 3s, capped
				{advance: 2999 * time.Millisecond, wantOpen: true},
				{advance: time.Millisecond, result: succeeded, wantAllow: true},
				{result: failed, wantAllow: true},
			},
		},
		{
			name: "a canceled probe lets another probe go",
			steps: []step{
				{result: failed, wantAllow: true},
				{result: failed, wantAllow: true, wantOpen: true},
				{advance: time.Second, result: neutral, wantAllow: true, wantOpen: true},
				{result: succeeded, wantAllow: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			b := newBreaker(BreakerConfig{Failures: 2, CoolDown: time.Second, MaxCoolDown: 3 * time.Second}, clock.Now, nil)
			for i, s := range tt.steps {
				clock.Advance(s.advance)
				ok, probe := b.allow()
				if ok != s.wantAllow {
					t.Fatalf("step %d: allow = %v, want %v", i, ok, s.wantAllow)
				}
				if ok {
					b.done(probe, s.result)
				}
				if b.isOpen() != s.wantOpen {
					t.Fatalf("step %d: open = %v, want %v", i, b.isOpen(), s.wantOpen)
				}
			}
		})
	}
}

func TestBreakerSingleProbe(t *testing.T) {
	clock := newFakeClock()
	b := newBreaker(BreakerConfig{Failures: 1}, clock.Now, nil)
	b.allow()
	b.done(false, failed)
	clock.Advance(time.Second)
	if ok, probe := b.allow(); !ok || !probe {
		t.Fatal("no probe after the cool-down")
	}
	if ok, _ := b.allow(); ok {
		t.Fatal("a second call went to Redis while the probe was out")
	}
}
