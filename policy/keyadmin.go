package policy

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchyardhq/switchyard/internal/humantime"
	"net/http"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// IssueKey creates a key for the named account, creating the account with a
// zero balance if it does not exist, under the profile's rules: at most
// MaxActiveKeys active keys (else 409 max_keys_reached) and KeyCreations
// per KeyCreationWindow (else 429 rate_limit_exceeded). The returned key is
// the only copy there will ever be.
func IssueKey(ctx context.Context, store storage.Store, hasher KeyHasher, p Profile, account, label string) (string, storage.APIKey, error) {
	return IssueKeyWith(ctx, store, hasher, p, account, label, storage.KeyControls{}, time.Now())
}

// IssueKeyWith is IssueKey for a key with controls, which must pass
// ValidKeyControls at now.
func IssueKeyWith(ctx context.Context, store storage.Store, hasher KeyHasher, p Profile, account, label string,
	controls storage.KeyControls, now time.Time) (string, storage.APIKey, error) {
	if err := ValidAccountName(account); err != nil {
		return "", storage.APIKey{}, err
	}
	if err := ValidKeyLabel(label); err != nil {
		return "", storage.APIKey{}, err
	}
	if err := ValidKeyControls(controls, now); err != nil {
		return "", storage.APIKey{}, err
	}
	acct, err := store.EnsureAccount(ctx, account)
	if err != nil {
		return "", storage.APIKey{}, err
	}
	key := NewKey()
	rec, err := store.CreateKey(ctx, storage.NewKey{
		AccountID:    acct.ID,
		Hash:         hasher.Hash(key),
		Hint:         KeyHint(key),
		Label:        label,
		MaxActive:    p.MaxActiveKeys,
		MaxPerWindow: p.KeyCreations,
		Window:       p.KeyCreationWindow,
		Controls:     controls,
	})
	switch {
	case errors.Is(err, storage.ErrMaxKeys):
		return "", rec, apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "max_keys_reached",
			fmt.Sprintf("Account %s already has %d active keys; revoke one first.", account, p.MaxActiveKeys))
	case errors.Is(err, storage.ErrAccountDisabled):
		return "", rec, errAccountDisabled(account)
	case errors.Is(err, storage.ErrKeyCreationRate):
		return "", rec, apierror.RateLimited(
			fmt.Sprintf("At most %d keys may be created per account per %s.", p.KeyCreations, humantime.Duration(p.KeyCreationWindow)), 0)
	case err != nil:
		return "", rec, err
	}
	return key, rec, nil
}

// ValidAccountName accepts 1 to 64 printable ASCII characters without
// spaces, so names are safe in logs, shells and URLs.
func ValidAccountName(name string) error {
	if len(name) == 0 || len(name) > 64 {
		return apierror.InvalidRequest("invalid_account", "An account name has 1 to 64 characters.")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' {
			return apierror.InvalidRequest("invalid_account",
				"An account name is printable ASCII without spaces.")
		}
	}
	return nil
}

// MaxLabelRunes bounds a key's label, a note to tell keys apart.
const MaxLabelRunes = 200

// ValidKeyLabel accepts up to MaxLabelRunes characters of valid UTF-8
// without control or bidirectional-override characters: a label is
// printed in the dashboard, the CLI's tables, alert emails and the audit
// log, where a newline or an escape sequence could forge a line and an
// override could reverse what a reader sees.
func ValidKeyLabel(label string) error {
	if !utf8.ValidString(label) || utf8.RuneCountInString(label) > MaxLabelRunes {
		return apierror.InvalidRequest("invalid_label",
			fmt.Sprintf("A label has at most %d characters.", MaxLabelRunes))
	}
	for _, r := range label {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return apierror.InvalidRequest("invalid_label",
				"A label has no control characters (line breaks, tabs, escapes or direction overrides).")
		}
	}
	return nil
}

// RevokeKey revokes the key keyID and returns it; revoking a revoked key
// returns it unchanged. With accountID set, a key of another account is
// answered like an unknown one, so that a caller scoped to one account
// learns nothing of others' keys. Unknown keys are 404 key_not_found.
// The revocation takes effect on every node at once, or with PostgreSQL
// as soon as its notification arrives (see KeyCache).
func RevokeKey(ctx context.Context, keys storage.Keys, accountID, keyID string) (storage.APIKey, error) {
	notFound := apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "key_not_found",
		fmt.Sprintf("No key with id %q.", keyID))
	if accountID != "" {
		owned, err := keys.ListKeys(ctx, accountID)
		if err != nil {
			return storage.APIKey{}, err
		}
		if !slices.ContainsFunc(owned, func(k storage.APIKey) bool { return k.ID == keyID }) {
			return storage.APIKey{}, notFound
		}
	}
	k, err := keys.RevokeKey(ctx, keyID)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.APIKey{}, notFound
	}
	return k, err
}

// SetKeyControls replaces the controls of the active key keyID, which
// must pass ValidKeyControls at now. With accountID set, a key of another
// account is answered like an unknown one. Unknown and revoked keys are
// 404 key_not_found. Every node reads the key again on its next request
// (the change raises the key generation, see KeyCache).
func SetKeyControls(ctx context.Context, keys storage.Keys, accountID, keyID string, c storage.KeyControls, now time.Time) (storage.APIKey, error) {
	if err := ValidKeyControls(c, now); err != nil {
		return storage.APIKey{}, err
	}
	notFound := apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "key_not_found",
		fmt.Sprintf("No active key with id %q.", keyID))
	if accountID != "" {
		owned, err := keys.ListKeys(ctx, accountID)
		if err != nil {
			return storage.APIKey{}, err
		}
		if !slices.ContainsFunc(owned, func(k storage.APIKey) bool { return k.ID == keyID }) {
			return storage.APIKey{}, notFound
		}
	}
	k, err := keys.SetKeyControls(ctx, keyID, c)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.APIKey{}, notFound
	}
	return k, err
}

func errAccountDisabled(account string) *apierror.Error {
	return apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "account_disabled",
		fmt.Sprintf("Account %s is disabled; an operator may enable it again.", account))
}

// SetAccountDisabled disables (disabled true) or enables the live account
// with id accountID. A disabled account's keys are refused with 401
// invalid_api_key on their next request on every node (on PostgreSQL
// once the commit's notification arrived), because disabling raises the
// key generation as a revocation does (see KeyCache); no key can be
// created for it (409 account_disabled), and its balance and ledger are
// kept. Enabling makes its keys work again. An unknown account is 404
// account_not_found.
func SetAccountDisabled(ctx context.Context, accounts storage.Accounts, accountID string, disabled bool) (storage.Account, error) {
	a, err := accounts.SetAccountDisabled(ctx, accountID, disabled)
	if errors.Is(err, storage.ErrNotFound) {
		return a, apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "account_not_found", "No such account.")
	}
	return a, err
}

// ErrAccountDisabled is the refusal of an action on a disabled account
// that only an enabled one may take (adding funds through a payment
// provider, creating keys): 409 account_disabled.
func ErrAccountDisabled(account string) error { return errAccountDisabled(account) }
