package limits

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// startLease returns the handle of a lease the admit script has added and
// starts its heartbeat. The heartbeat goroutine renews the lease every
// TTL/3 and releases it when ctx is done; it ends with the lease.
func (r *Redis) startLease(ctx context.Context, key, id string) *Lease {
	leaseKey := r.leaseKey(key)
	stop := make(chan struct{})
	var abandoned atomic.Bool
	l := newLease(key, id, func() {
		close(stop)
		if !abandoned.Load() {
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
func (r *Redis) startHold(account, id string, cents int64) *Hold {
	balanceKey, holdsKey := r.balanceKey(account), r.holdsKey(account)
	member := id + "|" + strconv.FormatInt(cents, 10)
	h := newHold(account, id, cents, func(charge int64) {
		r.settleHold(balanceKey, holdsKey, member, charge)
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
