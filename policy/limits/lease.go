package limits

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// Leaser hands out concurrency leases. Implementations are safe for
// concurrent use.
type Leaser interface {
	// Acquire takes one of limit slots of key. When all are taken it
	// returns a *LimitError of kind LimitStreams. The lease is released by
	// Release or when ctx is done, whichever comes first, so a stream
	// cancelled by its client never keeps its slot.
	Acquire(ctx context.Context, key string, limit int) (*Lease, error)
}

// Lease is one held concurrency slot. A nil *Lease is valid: Release does
// nothing and Done is closed, so callers may defer Release unconditionally.
type Lease struct {
	key, id string
	// releaser gives the slot back; called once. An interface rather
	// than a function, so that a limiter's lease can be one allocation
	// with what releasing it needs.
	releaser  leaseReleaser
	abandoned atomic.Bool // tests (Redis): stop renewing without releasing, as a crash would

	once    sync.Once
	stopCtx func() bool // stops the context.AfterFunc that releases on ctx done
	mu      sync.Mutex
	// done is Done's channel, made by the first Done: a lease lasts as
	// long as its stream, and nothing in the gateway waits on it.
	done     chan struct{}
	hooks    []func()
	released bool
}

// leaseReleaser releases the leases of a limiter.
type leaseReleaser interface {
	releaseLease(l *Lease)
}

// init makes l the lease id of key, released by rel.
func (l *Lease) init(key, id string, rel leaseReleaser) {
	l.key, l.id, l.releaser = key, id, rel
}

// abandon stops renewing l without releasing it, as a crash would, for
// tests of expiry.
func (l *Lease) abandon() {
	l.abandoned.Store(true)
	l.Release()
}

// tie releases l when ctx is done.
func (l *Lease) tie(ctx context.Context) {
	// AfterFunc runs Release on a goroutine of its own, at once if ctx is
	// already done: stopCtx is set under mu, which Release reads it under.
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopCtx = context.AfterFunc(ctx, func() { _ = guard.Run(leaseGoroutine, l.Release) })
}

// Key is the key the lease counts against.
func (l *Lease) Key() string {
	if l == nil {
		return ""
	}
	return l.key
}

// ID identifies the lease; in Redis it is the member of the key's set.
func (l *Lease) ID() string {
	if l == nil {
		return ""
	}
	return l.id
}

// Release gives the slot back. It is idempotent and safe to call from any
// goroutine; only the first call has an effect.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		l.mu.Lock()
		stopCtx := l.stopCtx
		l.mu.Unlock()
		if stopCtx != nil {
			stopCtx()
		}
		l.releaser.releaseLease(l)
		l.mu.Lock()
		l.released = true
		done, hooks := l.done, l.hooks
		l.hooks = nil
		l.mu.Unlock()
		if done != nil {
			close(done)
		}
		for _, f := range hooks {
			f()
		}
	})
}

// Done is closed once the lease is released, by Release or by its context.
func (l *Lease) Done() <-chan struct{} {
	if l == nil {
		return closedChan
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return closedChan
	}
	if l.done == nil {
		l.done = make(chan struct{})
	}
	return l.done
}

// onRelease runs f after the lease is released, at once if it already is.
func (l *Lease) onRelease(f func()) {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		f()
		return
	}
	l.hooks = append(l.hooks, f)
	l.mu.Unlock()
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
