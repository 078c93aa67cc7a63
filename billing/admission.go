package billing

import (
	"context"
	"errors"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// Ask is what admission needs to know of a request: where it goes and,
// for a JSON body, what its one strict parse found.
type Ask struct {
	Method, Path, ContentType string
	// HasBody is true when a JSON body was parsed; the fields below are
	// then its values.
	HasBody   bool
	BodyBytes int64
	Model     string
	Stream    bool
	MaxTokens int64
}

// AskV1 is the Ask of a request whose body ParseV1 read; the zero
// V1Request stands for a request without a JSON body.
func AskV1(method, path, contentType string, req V1Request) Ask {
	return Ask{
		Method: method, Path: path, ContentType: contentType,
		HasBody:   req.Body != nil,
		BodyBytes: int64(len(req.Body)),
		Model:     req.Model,
		Stream:    req.Stream,
		MaxTokens: req.MaxTokens,
	}
}

// AdmitRequest is the limiter's question for a request of p under prof:
// the key's request rate; one of the key's stream slots when the request
// streams; and, when it can be charged for (Chargeable), a hold of its
// estimated cost (HoldEstimate at the hold prices of its model, ForHold, or the
// minimum charge without a body) against the account's balance.
func AdmitRequest(prof policy.Profile, p policy.Principal, ask Ask) limits.AdmitRequest {
	req := limits.AdmitRequest{
		Key:         p.KeyID,
		Rate:        limits.RateFor(prof),
		StreamLimit: prof.ConcurrentStreams,
		WantLease:   ask.Stream,
	}
	if Chargeable(ask.Method, ask.Path, ask.ContentType) {
		want := prof.MinChargeCents
		if ask.HasBody {
			want = HoldEstimate(prof.ForHold(ask.Model), ask.BodyBytes, ask.MaxTokens, DefaultHoldTokens)
		}
		req.Reserve = limits.Reservation{
			Account: p.AccountID,
			Balance: p.BalanceCents,
			Want:    want,
			Min:     prof.MinChargeCents,
		}
	}
	return req
}

// Admit asks lim to admit a request of p: rate, stream slot and balance
// hold as one step (limits.Admitter). Errors are the limiter's, for the
// caller to count; Refusal turns them into what the client is told.
func Admit(ctx context.Context, lim limits.Admitter, prof policy.Profile, p policy.Principal, ask Ask) (limits.Admission, error) {
	return lim.Admit(ctx, AdmitRequest(prof, p, ask))
}

// Refusal is the client's error for an error of Admit: 402
// insufficient_balance, telling a balance held by requests in flight from
// one spent, for a *limits.BalanceError, else limits.APIError.
func Refusal(err error, balanceCents int64) *apierror.Error {
	if be, ok := errors.AsType[*limits.BalanceError](err); ok {
		msg := "Your balance of " + FormatCents(balanceCents) + " does not cover a request. Top up to continue."
		if be.Available < balanceCents {
			// The rest is held by the account's requests in flight.
			msg = "Your balance of " + FormatCents(balanceCents) + " is held by requests in flight (" +
				FormatCents(max(be.Available, 0)) + " available). Retry when they finish, or top up."
		}
		return apierror.InsufficientBalance(msg)
	}
	return limits.APIError(err)
}
