package limits

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestAuthFailuresBlocksAfterTheLimit(t *testing.T) {
	clock := newFakeClock()
	l := NewLocal(LocalConfig{Now: clock.Now})
	g, err := NewAuthFailures(AuthFailuresConfig{Limiter: l, Rate: Rate{Limit: 3, Period: time.Minute}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ip = "203.0.113.7"
	for i := range 3 {
		if _, over, err := g.Failed(ctx, ip); err != nil || over {
			t.Fatalf("failure %d: over %v, %v", i+1, over, err)
		}
		if _, blocked := g.Blocked(ip); blocked {
			t.Fatalf("blocked after %d failures of 3 allowed", i+1)
		}
		clock.Advance(10 * time.Second)
	}
	wait, over, err := g.Failed(ctx, ip)
	if err != nil || !over {
		t.Fatalf("the fourth failure in a minute: over %v, %v", over, err)
	}
	// The first failure leaves the window 60s after it, 30s from now.
	if wait != 30*time.Second {
		t.Fatalf("blocked for %s, want 30s", wait)
	}
	if _, blocked := g.Blocked("198.51.100.1"); blocked {
		t.Fatal("another address is blocked too")
	}
	clock.Advance(29 * time.Second)
	if left, blocked := g.Blocked(ip); !blocked || left != time.Second {
		t.Fatalf("1s before the end: blocked %v for %s", blocked, left)
	}
	e := AuthFailuresError(g, time.Second)
	if e.Status != http.StatusTooManyRequests || e.Code != "rate_limit_exceeded" || e.RetryAfter != 1 {
		t.Fatalf("error %+v", e)
	}
	clock.Advance(time.Second)
	if _, blocked := g.Blocked(ip); blocked {
		t.Fatal("still blocked once the oldest failure left the window")
	}
	// One more failure fits again (the first left the window), the next
	// does not.
	if _, over, _ := g.Failed(ctx, ip); over {
		t.Fatal("a failure after the block was refused")
	}
	if _, over, _ := g.Failed(ctx, ip); !over {
		t.Fatal("two failures fit where one slot was free")
	}
}

func TestAuthFailuresBoundsItsMemory(t *testing.T) {
	clock := newFakeClock()
	l := NewLocal(LocalConfig{Now: clock.Now})
	g, err := NewAuthFailures(AuthFailuresConfig{Limiter: l, Rate: Rate{Limit: 1, Period: time.Minute}, Now: clock.Now, MaxBlocked: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ip := range []string{"a", "b", "c"} {
		g.Failed(ctx, ip)
		if _, over, _ := g.Failed(ctx, ip); !over {
			t.Fatalf("%s: the second failure passed", ip)
		}
	}
	if n := g.count.Load(); n != 2 {
		t.Fatalf("%d addresses remembered, want the bound 2", n)
	}
	// c was not remembered, but the limiter still refuses it.
	if _, over, _ := g.Failed(ctx, "c"); !over {
		t.Fatal("c's next failure passed")
	}
	clock.Advance(2 * time.Minute)
	g.Failed(ctx, "d")
	if _, over, _ := g.Failed(ctx, "d"); !over {
		t.Fatal("d's second failure passed")
	}
	if _, blocked := g.Blocked("d"); !blocked {
		t.Fatal("expired entries were not dropped to make room for d")
	}
}

func TestAuthFailuresNeedsARate(t *testing.T) {
	if _, err := NewAuthFailures(AuthFailuresConfig{Limiter: NewLocal(LocalConfig{})}); err == nil {
		t.Fatal("no error without a rate")
	}
}
