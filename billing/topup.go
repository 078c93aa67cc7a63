package billing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// TopUp credits an existing account. It is for callers with authority
// over money (an operator, the CLI); it checks amounts and references,
// not who asks.
//
// reference makes the top-up idempotent: posting the same reference again
// for the same amount changes nothing and returns the entry of the first
// post together with storage.ErrDuplicateReference. Posting it for
// another amount changes nothing either and returns the first entry with
// 409 reference_conflict: a retry never changes what it asks for, so the
// caller has two top-ups in mind under one name. Top-ups have references
// of their own (storage.Ledger.Post), and those starting with
// storage.ChargeReferencePrefix, the server's spelling of a request's
// charge, or storage.PaymentReferencePrefix, a payment provider's, are
// refused with 400 invalid_reference so that no ledger shows a top-up
// that reads like a charge or a receipt.
//
// An amount outside the profile's bounds ($5 to $1000, spec section 5)
// is refused with 400 invalid_amount. Either refusal comes before
// anything is written.
func TopUp(ctx context.Context, store storage.Store, p policy.Profile, accountID string, cents int64, reference, note string) (storage.LedgerEntry, error) {
	if err := CheckTopUp(p, cents); err != nil {
		return storage.LedgerEntry{}, err
	}
	if reference == "" {
		return storage.LedgerEntry{}, fmt.Errorf("top-up needs a reference")
	}
	if err := CheckTopUpReference(reference); err != nil {
		return storage.LedgerEntry{}, err
	}
	e, err := store.Post(ctx, storage.Entry{
		AccountID:   accountID,
		AmountCents: cents,
		Kind:        storage.EntryTopUp,
		Reference:   reference,
		Note:        note,
	})
	if errors.Is(err, storage.ErrDuplicateReference) && e.AmountCents != cents {
		return e, apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "reference_conflict",
			fmt.Sprintf("The reference %q was already used for a top-up of %s; nothing changed. "+
				"A retry repeats the same amount: use a new reference for a new top-up.",
				clip.Ellipsis(reference, 128), FormatCents(e.AmountCents)))
	}
	return e, err
}

// CheckTopUpReference refuses a reference a top-up may not have: one
// spelt like a request's charge (storage.ChargeReferencePrefix) or a
// payment provider's receipt (storage.PaymentReferencePrefix), which
// only the server writes.
func CheckTopUpReference(reference string) error {
	if strings.HasPrefix(reference, storage.ChargeReferencePrefix) {
		return apierror.InvalidRequest("invalid_reference",
			fmt.Sprintf("A top-up reference may not start with %q: such references name requests' charges.",
				storage.ChargeReferencePrefix))
	}
	if strings.HasPrefix(reference, storage.PaymentReferencePrefix) {
		return apierror.InvalidRequest("invalid_reference",
			fmt.Sprintf("A top-up reference may not start with %q: such references name payments confirmed by a payment provider.",
				storage.PaymentReferencePrefix))
	}
	return nil
}

// CheckTopUp refuses an amount outside the profile's top-up bounds with
// 400 invalid_amount, for callers that must know before they write
// anything else (creating an account with a first top-up).
func CheckTopUp(p policy.Profile, cents int64) error {
	if cents < p.MinTopUpCents || cents > p.MaxTopUpCents {
		return apierror.InvalidRequest("invalid_amount",
			fmt.Sprintf("A top-up is between %s and %s; %s is not.",
				FormatCents(p.MinTopUpCents), FormatCents(p.MaxTopUpCents), FormatCents(cents)))
	}
	return nil
}
