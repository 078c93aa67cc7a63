package limits

import (
	"sync"
	"sync/atomic"
)

// Reservation asks Admit to hold money against an account's balance for
// the request, so that concurrent requests of one account cannot together
// spend more than it has. The zero Reservation holds nothing.
//
// The limiter keeps, per account, a mirror of the ledger balance and the
// holds of the requests in flight. The mirror is seeded from Balance when
// it is missing or older than the limiter's BalanceTTL, raised when
// Balance shows a credit (a top-up) since it was seeded, and lowered by
// each request's charge when its Hold is settled. The ledger stays the
// record: the mirror only decides admissions.
type Reservation struct {
	// Account is whose balance is held against. Empty: no reservation.
	Account string
	// Balance is the account's ledger balance in cents, as read with the
	// key lookup that authenticated the request.
	Balance int64
	// Want is the amount to hold in cents: an estimate of what the
	// request may cost. The hold is Want, or what is available when that
	// is less.
	Want int64
	// Min is the least that must be available for the request to be
	// admitted: the minimum charge. Less is a *BalanceError. Zero or
	// negative: 1 cent.
	Min int64
	// CheckOnly refuses the request, as any reservation, when less than
	// Min is available, but holds nothing and ignores Want: the question
	// asked before a request's body is read, when what it may cost is
	// not known yet. The admission's Hold is nil.
	CheckOnly bool
	// KeySpend, when it has a limit, also holds against the spend limit
	// of the request's key, in the same step: the hold must fit both the
	// account's available balance and what is left of the key's limit.
	KeySpend KeySpend
}

// KeySpend is a key's spend limit in its current period. The limiter
// keeps, per key, the spend of the period (seeded from Spent, raised by
// each settled charge) and the holds of its requests in flight; a
// request is admitted only if its whole hold fits under Limit beside
// them, so that concurrent requests cannot together overshoot it by
// more than what their charges exceed their holds.
type KeySpend struct {
	// Key is the key whose spend this is, the API key id.
	Key string
	// Period names the period (storage.SpendPeriod.Name): a new name
	// starts the key's spend afresh from Spent.
	Period string
	// Limit is the most the key may spend in the period, in cents; 0 or
	// less: no limit.
	Limit int64
	// Spent is what the key's committed charges add up to in the period,
	// as read with the key lookup.
	Spent int64
}

func (k KeySpend) limited() bool { return k.Limit > 0 && k.Key != "" }

func (r Reservation) wanted() bool { return r.Account != "" }

// holds reports whether the reservation holds money when admitted.
func (r Reservation) holds() bool { return r.wanted() && !r.CheckOnly }

func (r Reservation) min() int64 { return max(r.Min, 1) }

// want is what to hold at most: never less than the minimum, and
// nothing for a check.
func (r Reservation) want() int64 {
	if r.CheckOnly {
		return 0
	}
	return max(r.Want, r.min())
}

// Hold is money held back from an account's balance for one admitted
// request until it is settled. A nil *Hold is valid and holds nothing, so
// callers may defer Release unconditionally.
//
// While it is held the hold is renewed, every TTL/3 by its holder on Redis,
// lazily by the in-process limiter; a hold whose holder died (a crashed
// node) expires TTL after its last renewal.
type Hold struct {
	account, id string
	cents       int64
	// settler is the limiter's side of the hold: an interface rather
	// than functions, so that a limiter's hold can be one allocation
	// with what settling it needs.
	settler   holdSettler
	once      sync.Once
	handed    atomic.Bool // Handover was called: Settle and Release do nothing
	abandoned atomic.Bool // tests: stop renewing without settling, as a crash would
}

// holdSettler settles the holds of a limiter.
type holdSettler interface {
	// settle frees h and lowers the mirror by charge, once. gathered:
	// it may do so a moment later, together with others (Redis: one
	// round trip for the holds of one ledger commit).
	settle(h *Hold, charge int64, gathered bool)
	// stopRenewal stops renewing h; called once, before settle, or
	// alone when h is abandoned.
	stopRenewal(h *Hold)
}

// Account is the account held against.
func (h *Hold) Account() string {
	if h == nil {
		return ""
	}
	return h.account
}

// Cents is the amount held.
func (h *Hold) Cents() int64 {
	if h == nil {
		return 0
	}
	return h.cents
}

// Settle frees the hold and lowers the account's mirrored balance by
// charge, the amount the ledger was charged for the request (0 when it
// was not charged). Only the first Settle or Release has an effect; it is
// safe to call from any goroutine.
func (h *Hold) Settle(charge int64) {
	if h == nil || h.handed.Load() {
		return
	}
	h.settle1(charge)
}

// Handover gives the settling of h to whoever calls the returned
// Handed's Settle, which settles h like h.Settle, once; Settle and
// Release on h do nothing from then on. The hold stays in place,
// renewed, until it is called, or expires TTL after its holder died. It
// is how a request whose charge is committed after its handlers
// returned keeps its money held until the charge is durable, whatever
// the handlers release on their way out. If h was settled already, or
// is nil, the Handed does nothing.
//
// Unlike h.Settle, Handed.Settle may return before the hold is freed:
// the Redis limiter gathers the settlements that arrive together, those
// of one ledger commit, into one round trip, within a millisecond.
func (h *Hold) Handover() Handed {
	if h != nil {
		h.handed.Store(true)
	}
	return Handed{h}
}

// Handed is a hold handed over (Hold.Handover). It is a value holding
// the hold alone, where a function closing over it was an allocation a
// charge: as an interface (billing.HandedHold) it is boxed for free.
type Handed struct{ h *Hold }

// Settle settles the hold handed over with charge, once.
func (d Handed) Settle(charge int64) {
	if d.h != nil {
		d.h.settleOnce(charge, true)
	}
}

func (h *Hold) settle1(charge int64) { h.settleOnce(charge, false) }

func (h *Hold) settleOnce(charge int64, gathered bool) {
	h.once.Do(func() {
		h.settler.stopRenewal(h)
		if !h.abandoned.Load() {
			h.settler.settle(h, max(charge, 0), gathered)
		}
	})
}

// Release frees the hold without a charge: Settle(0). After a Settle it
// does nothing, so it is what a deferred call makes sure of.
func (h *Hold) Release() { h.Settle(0) }

// abandon stops the renewals and leaves the hold in place, as a crash
// would, for tests of expiry.
func (h *Hold) abandon() {
	h.abandoned.Store(true)
	h.settle1(0)
}
