package limits

import (
	"context"
	"sync"
)

// redisLease is a lease the admit script added, with what releasing and
// renewing it needs, in one allocation.
type redisLease struct {
	Lease
	r       *Redis
	renewal renewal // the lease's set and its id
	end     *streamEnd
	ended   streamEnd // end's, with a hold
}

// startLease returns the handle of the lease id of key, in the set at
// leaseKey, that the admit script has added,
// renewed (renewals) until it is released, by the holder or when ctx is
// done. The release is gathered (releases), with the hold's settlement if
// that waited for it: with a hold, end is the hold's and the lease's
// streamEnd.
func (r *Redis) startLease(ctx context.Context, key, leaseKey, id string, hold bool) (_ *Lease, end *streamEnd) {
	l := &redisLease{r: r, renewal: renewal{keys: [2]string{leaseKey}, member: id}}
	if hold {
		l.end = &l.ended
	}
	l.Lease.init(key, id, l)
	r.renewals.add(&l.renewal)
	l.tie(ctx)
	return &l.Lease, l.end
}

// releaseLease implements leaseReleaser. An abandoned lease (tests) is
// left in place, as a crash would leave it; the settlement that waited
// for it is sent.
func (l *redisLease) releaseLease(*Lease) {
	l.r.renewals.remove(&l.renewal)
	hold := l.end.leaseEnded()
	if l.abandoned.Load() {
		if hold != nil {
			l.r.settleHold(*hold)
		}
		return
	}
	l.r.releases.add(release{leaseKey: l.renewal.keys[0], leaseID: l.renewal.member, hold: hold})
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

// redisHold is a hold the admit script added, with what settling and
// renewing it needs, in one allocation.
type redisHold struct {
	Hold
	r       *Redis
	renewal renewal // the holds' set and the mirror; member "<id>|<cents>"
	end     *streamEnd
	// settlement is the hold's, part of it rather than an allocation of
	// its own: a hold is settled once (Hold.settleOnce).
	settlement settlement
}

// startHold returns the handle of a hold the admit script has added,
// member of the account's holds at holdsKey, whose sum is kept in the
// mirror at balanceKey, renewed (renewals) until it is settled or
// abandoned.
func (r *Redis) startHold(account, id, balanceKey, holdsKey, member string, cents int64, end *streamEnd) *Hold {
	h := &redisHold{Hold: Hold{account: account, id: id, cents: cents}, r: r, end: end,
		renewal: renewal{keys: [2]string{holdsKey, balanceKey}, member: member}}
	h.settler = h
	r.renewals.add(&h.renewal)
	return &h.Hold
}

// settle implements holdSettler. A stream's settlement waits for its
// slot's release and goes with it; else it is sent now (Settle) or
// gathered (Handover).
func (h *redisHold) settle(_ *Hold, charge int64, gathered bool) {
	s := &h.settlement
	*s = settlement{balanceKey: h.renewal.keys[1], holdsKey: h.renewal.keys[0], member: h.renewal.member, charge: charge}
	switch {
	case h.end.deferSettle(s):
	case gathered:
		h.r.releases.add(release{hold: s})
	default:
		h.r.settleHold(*s)
	}
}

// stopRenewal implements holdSettler.
func (h *redisHold) stopRenewal(*Hold) { h.r.renewals.remove(&h.renewal) }

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
