package billing

import (
	"context"
	"fmt"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// TopUp credits an existing account. reference makes the top-up
// idempotent: posting the same reference again changes nothing and returns
// the entry of the first post together with storage.ErrDuplicateReference.
// An amount outside the profile's bounds ($5 to $1000, spec section 5) is
// refused with 400 invalid_amount before
// anything is written.
func TopUp(ctx context.Context, store storage.Store, p policy.Profile, accountID string, cents int64, reference, note string) (storage.LedgerEntry, error) {
	if err := CheckTopUp(p, cents); err != nil {
		return storage.LedgerEntry{}, err
	}
	if reference == "" {
		return storage.LedgerEntry{}, fmt.Errorf("top-up needs a reference")
	}
	return store.Post(ctx, storage.Entry{
		AccountID:   accountID,
		AmountCents: cents,
		Kind:        storage.EntryTopUp,
		Reference:   reference,
		Note:        note,
	})
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
