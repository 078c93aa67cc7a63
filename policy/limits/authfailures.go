package limits

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// AuthFailures limits failed authentications per client address, so that
// a client guessing keys, or holding connections open with bad ones, is
// turned away before its requests cost a key lookup.
//
// Failures are counted with a rolling Rate on a RateLimiter (Local, or
// Redis across nodes) under the key "authfail:<address>". When a failure
// is refused by that rate, the address is blocked on this node until the
// rate would admit one again; while blocked, Blocked answers at once, in
// process, without touching the limiter or the store. A request that
// authenticates is never counted.
//
// The bound is exact on one node: at most Rate.Limit failed lookups in any
// window, then one more that is answered 429. Across N nodes sharing
// Redis each node learns of the block at its own next failure, so an
// address gets at most Rate.Limit + N lookups per window.
type AuthFailures struct {
	limiter RateLimiter
	rate    Rate
	now     func() time.Time
	max     int

	mu      sync.Mutex
	blocked map[string]time.Time // address → blocked until
	count   atomic.Int64         // len(blocked), read without the lock
}

// AuthFailuresConfig configures an AuthFailures.
type AuthFailuresConfig struct {
	// Limiter counts failures. Required.
	Limiter RateLimiter
	// Failures allowed per address and window; Rolling is forced on.
	// Required.
	Rate Rate
	// Now is the clock. Default (nil): time.Now.
	Now func() time.Time
	// MaxBlocked bounds the addresses remembered as blocked on this node.
	// Past it expired entries are dropped, and while it is still full a
	// newly refused address is not remembered: its next failure asks the
	// limiter again (which still refuses it). Default (0): 100,000.
	MaxBlocked int
}

// NewAuthFailures returns a guard counting failures on cfg.Limiter.
func NewAuthFailures(cfg AuthFailuresConfig) (*AuthFailures, error) {
	if cfg.Limiter == nil {
		return nil, fmt.Errorf("auth failures: no limiter")
	}
	if !cfg.Rate.Enabled() {
		return nil, fmt.Errorf("auth failures: the rate needs a positive limit and period")
	}
	cfg.Rate.Rolling = true
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBlocked <= 0 {
		cfg.MaxBlocked = 100_000
	}
	return &AuthFailures{limiter: cfg.Limiter, rate: cfg.Rate, now: cfg.Now, max: cfg.MaxBlocked,
		blocked: make(map[string]time.Time)}, nil
}

// Blocked reports whether addr is blocked now, and for how much longer.
// It costs one atomic load when no address is blocked.
func (g *AuthFailures) Blocked(addr string) (time.Duration, bool) {
	if g.count.Load() == 0 {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	until, ok := g.blocked[addr]
	if !ok {
		return 0, false
	}
	left := until.Sub(g.now())
	if left <= 0 {
		delete(g.blocked, addr)
		g.count.Store(int64(len(g.blocked)))
		return 0, false
	}
	return left, true
}

// Failed counts one failed authentication of addr. It reports whether the
// failure went past the limit, and then blocks addr until a failure would
// be admitted again. An error means the limiter could not count it (its
// failure policy decides whether that is an error at all); the failure
// is then not counted.
func (g *AuthFailures) Failed(ctx context.Context, addr string) (time.Duration, bool, error) {
	res, err := g.limiter.Allow(ctx, "authfail:"+addr, g.rate)
	if err != nil || res.Allowed {
		return 0, false, err
	}
	wait := max(res.RetryAfter, time.Second)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.blocked) >= g.max {
		for a, until := range g.blocked {
			if !until.After(now) {
				delete(g.blocked, a)
			}
		}
	}
	if len(g.blocked) < g.max {
		g.blocked[addr] = now.Add(wait)
	}
	g.count.Store(int64(len(g.blocked)))
	return wait, true, nil
}

// Rate is the guard's rate of allowed failures.
func (g *AuthFailures) Rate() Rate { return g.rate }

// AuthFailuresError is the 429 a blocked address gets: the spec's
// rate_limit_exceeded envelope with Retry-After. It says nothing of keys,
// so it tells a guesser nothing about the ones it tried.
func AuthFailuresError(g *AuthFailures, wait time.Duration) *apierror.Error {
	return apierror.RateLimited(fmt.Sprintf(
		"Too many requests with invalid API keys from this address: at most %d in any rolling %s. Please try again in %s.",
		g.rate.Limit, FormatDuration(g.rate.Period), FormatDuration(wait)), retrySeconds(wait))
}
