package limits

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// startLease returns the handle of a lease the admit script has added and
// starts its heartbeat. The heartbeat goroutine renews the lease every
// TTL/3 and releases it when ctx is done; it ends with the lease.
func (r *Redis) startLease(ctx context.Context, key, id string, end *streamEnd) *Lease {
	leaseKey := r.leaseKey(key)
	stop := make(chan struct{})
	var abandoned atomic.Bool
	l := newLease(key, id, func() {
		close(stop)
		settle := end.leaseEnded()
		switch {
		case abandoned.Load():
			if settle != nil {
				settle(nil)
			}
		case settle != nil:
			r.settleAndRelease(settle, leaseKey, id)
		default:
			r.releaseLease(leaseKey, id)
		}
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

// releaseLease removes the lease member. Release is usually called when
// the request context is already done, hence a context of its own. When
// Redis does not answer, the member expires within the lease TTL.
func (r *Redis) releaseLease(leaseKey, id string) {
	_ = r.call(context.Background(), "release", func(ctx context.Context) error {
		return r.client.ZRem(ctx, leaseKey, id).Err()
	})
}

// startHold returns the handle of a hold the admit script has added and
// starts its heartbeat, which renews it every LeaseTTL/3 until it is
// settled.
func (r *Redis) startHold(account, id string, cents int64, end *streamEnd) *Hold {
	balanceKey, holdsKey := r.balanceKey(account), r.holdsKey(account)
	member := id + "|" + strconv.FormatInt(cents, 10)
	// A stream's settlement waits for its lease's release and shares its
	// pipeline; else it is sent now (Settle) or gathered (Handover).
	h := newHold(account, id, cents, func(charge int64, gathered bool) {
		settle := func(pipe redis.Pipeliner) {
			switch {
			case pipe != nil:
				pipe.EvalSha(context.Background(), settleScript.Hash(), []string{balanceKey, holdsKey}, member, charge)
			case gathered:
				r.settles.add(settlement{balanceKey: balanceKey, holdsKey: holdsKey, member: member, charge: charge})
			default:
				r.settleHold(balanceKey, holdsKey, member, charge)
			}
		}
		if !end.deferSettle(settle) {
			settle(nil)
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

// settleHold frees the hold and lowers the mirrored balance by charge.
// When Redis does not answer, the hold expires within LeaseTTL and the
// mirror, which then lacks the charge, within BalanceTTL.
func (r *Redis) settleHold(balanceKey, holdsKey, member string, charge int64) {
	err := r.call(context.Background(), "settle", func(ctx context.Context) error {
		return settleScript.Run(ctx, r.client, []string{balanceKey, holdsKey}, member, charge).Err()
	})
	if err != nil && charge > 0 {
		r.log.Warn("redis limiter could not lower a mirrored balance by a charge",
			zap.String("hold", member), zap.Error(err))
	}
}

// streamEnd ends a stream's hold and lease, admitted together, with one
// round trip: a hold settled while its lease is held (the charge is
// recorded before the handlers return, the slot freed as they return)
// waits for the lease's release, which sends both in one pipeline. A nil
// *streamEnd defers nothing.
type streamEnd struct {
	mu     sync.Mutex
	ended  bool                  // the lease was released
	settle func(redis.Pipeliner) // a settlement waiting for it
}

// deferSettle keeps settle for the lease's release and reports whether it
// did; false when the lease is already gone.
func (e *streamEnd) deferSettle(settle func(redis.Pipeliner)) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return false
	}
	e.settle = settle
	return true
}

// leaseEnded marks the lease released and returns the settlement waiting
// for it, if any.
func (e *streamEnd) leaseEnded() func(redis.Pipeliner) {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = true
	settle := e.settle
	e.settle = nil
	return settle
}

// settleAndRelease sends a deferred settlement and the lease's removal in
// one pipeline. Should Redis not know the settle script yet (a restart),
// the settlement is sent again on its own, which loads it.
func (r *Redis) settleAndRelease(settle func(redis.Pipeliner), leaseKey, id string) {
	var noScript bool
	err := r.call(context.Background(), "release", func(ctx context.Context) error {
		pipe := r.client.Pipeline()
		settle(pipe)
		pipe.ZRem(ctx, leaseKey, id)
		cmds, err := pipe.Exec(ctx)
		if len(cmds) > 0 && redis.HasErrorPrefix(cmds[0].Err(), "NOSCRIPT") {
			noScript = true
			return nil
		}
		return err
	})
	// noScript is only read once the reply is in: after a timeout the
	// call may still be writing it.
	if err == nil && noScript {
		settle(nil)
	}
}
