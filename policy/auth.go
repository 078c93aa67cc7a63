package policy

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	KeyID       string
	KeyHint     string
	AccountID   string
	AccountName string
	// BalanceCents is the account's balance as read while authenticating
	// this request, or as read before if the store has committed nothing
	// since (KeyCache): the current balance either way. The balance gate
	// uses it.
	BalanceCents int64
	// Controls are the key's own limits (CheckKeyUse, CheckModel, and
	// the admission's rate, stream and spend limits).
	Controls storage.KeyControls
	// PeriodSpendCents is what the key's committed charges add up to in
	// its current spend period, as read with its lookup; with a spend
	// limit only.
	PeriodSpendCents int64
	// Period names the spend period of PeriodSpendCents.
	Period string
}

// KeyStore is what authentication reads from the store.
type KeyStore interface {
	LookupKey(ctx context.Context, hash string) (storage.KeyOwner, error)
	KeyState(ctx context.Context, accountID string) (balanceCents, generation int64, err error)
	Revision() (rev storage.Revision, ok bool)
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// WithIdentity returns a context carrying id's principal once id is
// authenticated. The context keeps id itself, where WithPrincipal boxes a
// copy of the principal, one allocation more per request.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, principalKey{}, id)
}

// PrincipalFrom returns the principal stored by WithPrincipal, or that of
// the authenticated identity stored by WithIdentity.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	switch v := ctx.Value(principalKey{}).(type) {
	case Principal:
		return v, true
	case *Identity:
		if v.Authenticated {
			return v.Principal, true
		}
	}
	return Principal{}, false
}

// Authenticator turns an Authorization header into a Principal.
//
// Without a cache every request makes one indexed read: the key lookup
// by its keyed hash, which carries the balance. With a KeyCache, a key
// looked up before costs the account's balance together with the store's
// key generation, and nothing at all while the store reports no commit
// since that read. A revoked key is refused on its very next request, or
// on PostgreSQL once the revocation's notification reached this node
// (see KeyCache).
type Authenticator struct {
	keys     KeyStore
	hasher   KeyHasher
	cache    *KeyCache // nil: no caching
	cacheTTL time.Duration
}

// NewAuthenticator returns an authenticator over keys. With a cache,
// lookups are kept for at most cacheTTL; a cacheTTL of zero or less
// caches nothing.
func NewAuthenticator(keys KeyStore, hasher KeyHasher, cache *KeyCache, cacheTTL time.Duration) *Authenticator {
	if cacheTTL <= 0 {
		cache = nil
	}
	return &Authenticator{keys: keys, hasher: hasher, cache: cache, cacheTTL: cacheTTL}
}

// Authenticate checks the value of an Authorization header. Failures are
// *apierror.Error values with code invalid_api_key, except store failures,
// which are returned as they are so that the caller answers 500 instead of
// telling a valid caller its key is wrong.
func (a *Authenticator) Authenticate(ctx context.Context, authorization string) (Principal, error) {
	key, err := BearerToken(authorization)
	if err != nil {
		return Principal{}, err
	}
	hash := a.hasher.hexSum(key)
	owner, err := a.lookup(ctx, &hash)
	if errors.Is(err, storage.ErrNotFound) {
		return Principal{}, apierror.InvalidAPIKey("Incorrect API key provided: " + KeyHint(key) + ".")
	}
	if err != nil {
		return Principal{}, err
	}
	// The lookup was by hash, so this cannot fail for a correct store; it
	// is the constant-time check that the record really is for this key.
	if subtle.ConstantTimeCompare([]byte(owner.KeyHash), hash[:]) != 1 {
		return Principal{}, apierror.InvalidAPIKey("Incorrect API key provided: " + KeyHint(key) + ".")
	}
	return Principal{
		KeyID:            owner.KeyID,
		KeyHint:          owner.KeyHint,
		AccountID:        owner.AccountID,
		AccountName:      owner.AccountName,
		BalanceCents:     owner.BalanceCents,
		Controls:         owner.Controls,
		PeriodSpendCents: owner.PeriodSpendCents,
		Period:           owner.Period,
	}, nil
}

// lookup finds the key of hash, in the cache when it can. The hash
// becomes a string only for the store: a key found in the cache with
// nothing committed since costs no allocation.
func (a *Authenticator) lookup(ctx context.Context, hash *hexHash) (storage.KeyOwner, error) {
	if a.cache == nil {
		return a.keys.LookupKey(ctx, string(hash[:]))
	}
	// The revision is taken before the read it vouches for: a commit
	// in between makes the next request read again, never the reverse.
	rev, revOK := a.keys.Revision()
	if e, ok := a.cache.get(hash[:], a.cacheTTL); ok {
		limited := e.owner.Controls.SpendLimitCents > 0
		if revOK && e.revOK && e.rev == rev && (!limited || a.cache.samePeriod(e)) {
			return e.owner, nil // nothing committed since it was read
		}
		if limited {
			// Its spend moves with every charge, and the balance read
			// does not carry it: read the key again.
			return a.relookup(ctx, string(hash[:]), rev, revOK)
		}
		balance, gen, err := a.keys.KeyState(ctx, e.owner.AccountID)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return storage.KeyOwner{}, err
		}
		if err == nil && gen == e.owner.KeyGeneration {
			a.cache.refresh(string(hash[:]), balance, rev, revOK)
			owner := e.owner
			owner.BalanceCents = balance
			return owner, nil
		}
		// A key was revoked somewhere since this one was looked up.
		a.cache.advance(gen)
	}
	return a.relookup(ctx, string(hash[:]), rev, revOK)
}

// relookup reads the key from the store and caches what it found.
func (a *Authenticator) relookup(ctx context.Context, hash string, rev storage.Revision, revOK bool) (storage.KeyOwner, error) {
	owner, err := a.keys.LookupKey(ctx, hash)
	switch {
	case err == nil:
		a.cache.put(hash, owner, rev, revOK)
	case errors.Is(err, storage.ErrNotFound):
		a.cache.forget(hash)
	}
	return owner, err
}

// BearerToken extracts an API key from an Authorization header value of the
// form "Bearer sk-...". The scheme is matched without regard to case, as
// RFC 9110 asks; anything else is refused with invalid_api_key.
func BearerToken(authorization string) (string, error) {
	if authorization == "" {
		return "", apierror.InvalidAPIKey("You didn't provide an API key. " +
			"Send it in the Authorization header as 'Bearer sk-...'.")
	}
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.IndexByte(token, ' ') >= 0 || strings.IndexByte(token, '\t') >= 0 {
		return "", apierror.InvalidAPIKey("Malformed Authorization header: expected 'Bearer sk-...'.")
	}
	if !ValidKeyFormat(token) {
		return "", apierror.InvalidAPIKey("Incorrect API key provided: the key is not in the sk-... format.")
	}
	return token, nil
}
