package limits

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// startLease returns the handle of a lease the admit script has added and
// starts its heartbeat. The heartbeat goroutine renews the lease every
// TTL/3 and releases it when ctx is done; it ends with the lease. The
// release is gathered (releases), with the hold's settlement if that
// waited for it.
func (r *Redis) startLease(ctx context.Context, key, id string, end *streamEnd) *Lease {
	leaseKey := r.leaseKey(key)
	stop := make(chan struct{})
	var abandoned atomic.Bool
	l := newLease(key, id, func() {
		close(stop)
		hold := end.leaseEnded()
		if abandoned.Load() {
			if hold != nil {
				r.settleHold(*hold)
			}
			return
		}
		r.releases.add(release{leaseKey: leaseKey, leaseID: id, hold: hold})
	})
	l.abandon = func() {
		abandoned.Store(true)
		l.Release()
	}
	go r.heartbeat(ctx, l, leaseKey, id, stop)
	return l
}

func (r *Redis) heartbeat(ctx context.Context, l *Lease, leaseKey, id string, stop <-chan struct{}) {
	t := time.NewTicker(max(r.leaseTTL/3, time.Millisecond))
	defer t.Stop()
	tick := t.C
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			l.Release()
			return
		case <-tick:
			kept, err := r.renew(leaseKey, id)
			if err == nil && !kept {
				// Renewals failed for a whole TTL and the slot was given
				// up. The stream goes on; its slot may be counted for
				// another holder, so the limit is exceeded by one until
				// the stream ends. Re-adding it could push others over.
				r.log.Warn("redis limiter lost a lease that expired while renewals failed",
					zap.String("key", l.key), zap.String("lease", id))
				tick = nil
			}
			if r.onRenew != nil {
				r.onRenew(kept)
			}
		}
	}
}

// renew extends the lease. It runs outside any request, so it has no
// request context; the breaker spares Redis while it is down.
func (r *Redis) renew(leaseKey, id string) (kept bool, err error) {
	err = r.call(context.Background(), "renew", func(ctx context.Context) error {
		n, err := renewScript.Run(ctx, r.client, []string{leaseKey}, r.nowArg(), id, seconds(r.leaseTTL)).Int()
		kept = n == 1
		return err
	})
	if err != nil {
		return false, err // kept may still be written by a late reply
	}
	return kept, nil
}

// startHold returns the handle of a hold the admit script has added and
// starts its heartbeat, which renews it every LeaseTTL/3 until it is
// settled.
func (r *Redis) startHold(account, id string, cents int64, end *streamEnd) *Hold {
	balanceKey, holdsKey := r.balanceKey(account), r.holdsKey(account)
	member := id + "|" + strconv.FormatInt(cents, 10)
	// A stream's settlement waits for its slot's release and goes with
	// it; else it is sent now (Settle) or gathered (Handover).
	h := newHold(account, id, cents, func(charge int64, gathered bool) {
		s := &settlement{balanceKey: balanceKey, holdsKey: holdsKey, member: member, charge: charge}
		switch {
		case end.deferSettle(s):
		case gathered:
			r.releases.add(release{hold: s})
		default:
			r.settleHold(*s)
		}
	})
	go h.heartbeat(r.leaseTTL, func() bool {
		kept, err := r.renew(holdsKey, member)
		if err == nil && !kept {
			r.log.Warn("redis limiter lost a hold that expired while renewals failed",
				zap.String("account", account), zap.String("hold", id))
		}
		if r.onRenew != nil {
			r.onRenew(kept)
		}
		return err != nil || kept
	})
	return h
}

// streamEnd ends a stream's hold and lease, admitted together, with one
// release: a hold settled while its lease is held (the charge is
// recorded before the handlers return, the slot freed as they return)
// waits for the lease's release and goes with it. A nil *streamEnd defers
// nothing.
type streamEnd struct {
	mu     sync.Mutex
	ended  bool        // the lease was released
	settle *settlement // a settlement waiting for it
}

// deferSettle keeps s for the lease's release and reports whether it did;
// false when the lease is already gone.
func (e *streamEnd) deferSettle(s *settlement) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return false
	}
	e.settle = s
	return true
}

// leaseEnded marks the lease released and returns the settlement waiting
// for it, if any.
func (e *streamEnd) leaseEnded() *settlement {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = true
	s := e.settle
	e.settle = nil
	return s
}
