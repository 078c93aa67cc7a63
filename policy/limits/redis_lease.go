package limits

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
)

// startLease returns the handle of the lease id of key, in the set at
// leaseKey, that the admit script has added,
// renewed (renewals) until it is released, by the holder or when ctx is
// done. The release is gathered (releases), with the hold's settlement if
// that waited for it.
func (r *Redis) startLease(ctx context.Context, key, leaseKey, id string, end *streamEnd) *Lease {
	renewal := r.renewals.add([]string{leaseKey}, id, r.lostLease(key, id))
	var abandoned atomic.Bool
	l := newLease(key, id, func() {
		r.renewals.remove(renewal)
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
	l.tie(ctx)
	return l
}

// renew extends one lease or hold (member of the sorted set at keys[0];
// keys[1] is a hold's sum) in a round trip of its own. It runs outside
// any request, so it has no request context; the breaker spares Redis
// while it is down.
func (r *Redis) renew(keys []string, member string) (kept bool, err error) {
	err = r.call(context.Background(), "renew", func(ctx context.Context) error {
		n, err := renewScript.Run(ctx, r.client, keys, r.nowArg(), member, seconds(r.leaseTTL)).Int()
		kept = n == 1
		return err
	})
	if err != nil {
		return false, err // kept may still be written by a late reply
	}
	return kept, nil
}

// startHold returns the handle of a hold the admit script has added,
// renewed (renewals) until it is settled or abandoned.
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
	renewal := r.renewals.add([]string{holdsKey, balanceKey}, member, r.lostHold(account, id))
	h.stopRenewal = func() { r.renewals.remove(renewal) }
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
