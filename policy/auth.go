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
	// this request, never a cached value: the balance gate uses it.
	BalanceCents int64
}

// KeyStore is what authentication reads from the store.
type KeyStore interface {
	LookupKey(ctx context.Context, hash string) (storage.KeyOwner, error)
	Balance(ctx context.Context, accountID string) (int64, error)
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal stored by WithPrincipal.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Authenticator turns an Authorization header into a Principal.
//
// Lookups go to the store by the key's keyed hash, one indexed read per
// request, so a revoked key is refused on its very next request on every
// node. Where that read is too dear, a KeyCache fed by the store's
// revocation notifications can stand in front of it (see KeyCache for
// the trade-off).
type Authenticator struct {
	keys     KeyStore
	hasher   KeyHasher
	cache    *KeyCache // nil: no caching
	cacheTTL time.Duration
}

// NewAuthenticator returns an authenticator over keys. With a cache,
// lookups are kept for at most cacheTTL.
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
	hash := a.hasher.Hash(key)
	owner, err := a.lookup(ctx, hash)
	if errors.Is(err, storage.ErrNotFound) {
		return Principal{}, apierror.InvalidAPIKey("Incorrect API key provided: " + KeyHint(key) + ".")
	}
	if err != nil {
		return Principal{}, err
	}
	// The lookup was by hash, so this cannot fail for a correct store; it
	// is the constant-time check that the record really is for this key.
	if subtle.ConstantTimeCompare([]byte(owner.KeyHash), []byte(hash)) != 1 {
		return Principal{}, apierror.InvalidAPIKey("Incorrect API key provided: " + KeyHint(key) + ".")
	}
	return Principal{
		KeyID:        owner.KeyID,
		KeyHint:      owner.KeyHint,
		AccountID:    owner.AccountID,
		AccountName:  owner.AccountName,
		BalanceCents: owner.BalanceCents,
	}, nil
}

func (a *Authenticator) lookup(ctx context.Context, hash string) (storage.KeyOwner, error) {
	if a.cache == nil {
		return a.keys.LookupKey(ctx, hash)
	}
	if owner, ok := a.cache.get(hash, a.cacheTTL); ok {
		// The key may come from the cache, its balance may not.
		balance, err := a.keys.Balance(ctx, owner.AccountID)
		owner.BalanceCents = balance
		return owner, err
	}
	gen, cacheable := a.cache.generation()
	owner, err := a.keys.LookupKey(ctx, hash)
	if err == nil && cacheable {
		a.cache.put(hash, owner, gen)
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
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", apierror.InvalidAPIKey("Malformed Authorization header: expected 'Bearer sk-...'.")
	}
	if !ValidKeyFormat(token) {
		return "", apierror.InvalidAPIKey("Incorrect API key provided: the key is not in the sk-... format.")
	}
	return token, nil
}
