package limits

import (
	"context"
	"fmt"
)

// AdmitRequest asks for one request to be admitted under a key's rate and,
// for a stream, one of its concurrency slots.
type AdmitRequest struct {
	// Key is what both limits count against, normally the API key id.
	Key string
	// Account is the account Key belongs to. The Redis limiter keeps all
	// of a key's state under its account's hash tag, beside the
	// account's balance and holds, so that one admission touches one
	// Redis Cluster slot; a key must therefore be admitted under the same
	// Account every time. Empty: Reserve.Account, or with no reservation
	// either, a tag of the key's own. It must name the same account as
	// Reserve.Account when both are set. Local ignores it.
	Account string
	// Rate is the request rate. The zero Rate checks no rate.
	Rate Rate
	// StreamLimit is how many leases Key may hold at once. Used only when
	// WantLease is true; zero or negative means no lease is taken.
	StreamLimit int
	// WantLease asks for a concurrency lease, held until it is released or
	// the context passed to Admit is done.
	WantLease bool
	// Reserve holds money against an account's balance for the request,
	// checked before the rate and the lease: an account that cannot cover
	// Reserve.Min gets a *BalanceError and spends neither. The zero
	// Reservation holds nothing.
	Reserve Reservation
}

func (r AdmitRequest) wantsLease() bool { return r.WantLease && r.StreamLimit > 0 }

// owner is the account whose hash tag the key's state lives under; ""
// for the key's own.
func (r AdmitRequest) owner() (string, error) {
	switch {
	case r.Account == "":
		return r.Reserve.Account, nil
	case r.Reserve.Account != "" && r.Reserve.Account != r.Account:
		return "", fmt.Errorf("limits: key %q of account %q cannot reserve from account %q", r.Key, r.Account, r.Reserve.Account)
	}
	return r.Account, nil
}

// Admission is the outcome of Admit.
type Admission struct {
	// Rate is the rate result, for the x-ratelimit-* headers. When the
	// request was refused by the concurrency limit it reports the budget
	// as it is, untouched by this request.
	Rate RateResult
	// Lease is the concurrency slot when one was asked for and the request
	// was admitted; nil otherwise.
	Lease *Lease
	// Hold is the money held for the request when a reservation was asked
	// for and the request was admitted; nil otherwise. It is not tied to
	// the context: the holder settles it when the request's charge is
	// known, and releases it in a defer in any case.
	Hold *Hold
	// Fallback is true when Redis could not answer and the in-process
	// fallback decided instead.
	Fallback bool
}

// Admitter checks a request's rate and concurrency limits together.
type Admitter interface {
	// Admit checks the rate and, when the rate admits the request and a
	// lease is wanted, takes a lease, as one atomic step: a request refused
	// by either limit consumes nothing of the other. With a reservation it
	// first checks the account's available balance (its mirrored balance
	// minus the holds of its requests in flight) and, when the request is
	// admitted, holds up to req.Reserve.Want of it, in the same step. A
	// refusal is a *LimitError, returned together with the Admission so
	// that the caller can still send the rate headers, or a *BalanceError,
	// which checked no rate. A *UnavailableError means the limits
	// could not be checked and the policy is to refuse.
	Admit(ctx context.Context, req AdmitRequest) (Admission, error)
}

// Prechecker tells, from what the node already knows and without a round
// trip to anyone, whether Admit would refuse a request now: the check a
// gateway makes before it reads a request's body, so that a client Admit
// would refuse holds no memory with it.
type Prechecker interface {
	// Precheck returns the refusal Admit would give req now as far as
	// the node knows for free: a *BalanceError when the ledger balance
	// req.Reserve carries (or, in process, the available balance) does
	// not cover its minimum, a *LimitError when the key's rate is known
	// to be spent, with the rate as it stands for the headers. It counts,
	// takes and holds nothing. A nil error promises nothing: Admit
	// decides.
	Precheck(req AdmitRequest) (Admission, error)
}

// acquireByAdmit implements Leaser.Acquire for an Admitter: a lease alone
// is an admission with no rate to check.
func acquireByAdmit(ctx context.Context, a Admitter, key string, limit int) (*Lease, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("limits: acquire %q with limit %d", key, limit)
	}
	adm, err := a.Admit(ctx, AdmitRequest{Key: key, StreamLimit: limit, WantLease: true})
	return adm.Lease, err
}

// HoldReporter tells how much of an account's balance requests in flight
// hold, for reports: the amount may change the moment it is read.
type HoldReporter interface {
	// Held sums the account's unexpired holds in cents; 0 for an account
	// with none.
	Held(ctx context.Context, account string) (int64, error)
}

// Limiter is everything the gateway asks of a limiter. *Local and *Redis
// implement it.
type Limiter interface {
	RateLimiter
	Leaser
	Admitter
	Prechecker
	HoldReporter
}

// ledgerShort is the refusal of a reservation whose ledger balance, as
// the key lookup read it, does not cover its minimum, or nil.
func ledgerShort(res Reservation) error {
	if res.wanted() && res.Balance < res.min() {
		return &BalanceError{Available: res.Balance, Min: res.min()}
	}
	if ks := res.KeySpend; res.wanted() && ks.limited() && ks.Spent+res.min() > ks.Limit {
		return &SpendLimitError{Limit: ks.Limit, Spent: ks.Spent, Want: res.min()}
	}
	return nil
}
