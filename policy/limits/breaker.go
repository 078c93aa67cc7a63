package limits

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerConfig configures the circuit breaker in front of Redis.
type BreakerConfig struct {
	// Failures is how many consecutive failed Redis calls open the
	// breaker. Default (0): 5.
	Failures int
	// CoolDown is how long the breaker stays open the first time. Each
	// failed probe after it doubles the time, up to MaxCoolDown.
	// Default (0): 1s.
	CoolDown time.Duration
	// MaxCoolDown caps the cool-down. Default (0): 30s.
	MaxCoolDown time.Duration
}

// breaker stops calls to Redis after repeated failures, so that an outage
// costs each request nothing instead of a timeout. While open, calls go
// straight to the failure policy. When the cool-down has passed, one call
// is let through as a probe: success closes the breaker, failure opens it
// again for twice as long.
type breaker struct {
	cfg BreakerConfig
	now func() time.Time

	// quiet is true while the breaker is closed and counts no failure:
	// allow and a success's done then have nothing to change, and read
	// it instead of taking mu, which every Redis call would otherwise
	// take twice. Written under mu.
	quiet atomic.Bool

	mu        sync.Mutex
	failures  int       // consecutive, while closed
	openUntil time.Time // zero while closed
	coolDown  time.Duration
	probing   bool
	onChange  func(open bool, coolDown time.Duration)
}

type outcome int

const (
	succeeded outcome = iota
	failed
	neutral // the caller gave up; says nothing about Redis
)

func newBreaker(cfg BreakerConfig, now func() time.Time, onChange func(bool, time.Duration)) *breaker {
	if cfg.Failures <= 0 {
		cfg.Failures = 5
	}
	if cfg.CoolDown <= 0 {
		cfg.CoolDown = time.Second
	}
	if cfg.MaxCoolDown <= 0 {
		cfg.MaxCoolDown = 30 * time.Second
	}
	cfg.MaxCoolDown = max(cfg.MaxCoolDown, cfg.CoolDown)
	b := &breaker{cfg: cfg, now: now, onChange: onChange}
	b.quiet.Store(true)
	return b
}

// allow reports whether a call may go to Redis. A true answer must be
// followed by exactly one done.
func (b *breaker) allow() (ok, probe bool) {
	if b.quiet.Load() {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true, false
	}
	if b.probing || b.now().Before(b.openUntil) {
		return false, false
	}
	b.probing = true
	return true, true
}

func (b *breaker) done(probe bool, o outcome) {
	if !probe && o != failed && b.quiet.Load() {
		return
	}
	b.mu.Lock()
	var changed, open bool
	var coolDown time.Duration
	if probe {
		b.probing = false
	}
	switch {
	case o == neutral:
	case o == succeeded:
		b.failures = 0
		if !b.openUntil.IsZero() {
			b.openUntil, b.coolDown = time.Time{}, 0
			changed = true
		}
	case !b.openUntil.IsZero():
		// A call that started before the breaker opened may fail after:
		// only a probe's failure extends the cool-down.
		if probe {
			b.coolDown = min(2*b.coolDown, b.cfg.MaxCoolDown)
			b.openUntil = b.now().Add(b.coolDown)
			changed, open, coolDown = true, true, b.coolDown
		}
	default:
		b.failures++
		if b.failures >= b.cfg.Failures {
			b.failures = 0
			b.coolDown = b.cfg.CoolDown
			b.openUntil = b.now().Add(b.coolDown)
			changed, open, coolDown = true, true, b.coolDown
		}
	}
	b.quiet.Store(b.openUntil.IsZero() && b.failures == 0)
	b.mu.Unlock()
	if changed && b.onChange != nil {
		b.onChange(open, coolDown)
	}
}

// isOpen reports whether calls are being skipped, for metrics.
func (b *breaker) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openUntil.IsZero()
}
