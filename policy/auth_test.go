package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// memKeys is a KeyStore for exercising the authenticator. It keeps a key
// generation as the SQL stores do: revoke raises it.
type memKeys struct {
	mu      sync.Mutex
	owners  map[string]storage.KeyOwner
	gen     int64
	lookups int
	// balance is every account's balance.
	balance      int64
	balanceReads int
	// during runs inside LookupKey after the record is read, to let a
	// test interleave a revocation with a lookup in flight.
	during func()
	// commits counts the changes; Revision reports it when tracked is
	// set, as the embedded store does, and nothing otherwise.
	commits uint64
	tracked bool
}

func (m *memKeys) Revision() (storage.Revision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return storage.NewRevision(0, m.commits), m.tracked
}

// setBalance changes every account's balance, as a commit would.
func (m *memKeys) setBalance(cents int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.balance = cents
	m.commits++
}

func (m *memKeys) LookupKey(_ context.Context, hash string) (storage.KeyOwner, error) {
	m.mu.Lock()
	m.lookups++
	o, ok := m.owners[hash]
	o.KeyGeneration, o.BalanceCents = m.gen, m.balance
	during := m.during
	m.mu.Unlock()
	if during != nil {
		during()
	}
	if !ok {
		return storage.KeyOwner{}, storage.ErrNotFound
	}
	return o, nil
}

func (m *memKeys) KeyState(_ context.Context, accountID string) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.balanceReads++
	return m.balance, m.gen, nil
}

// revoke revokes a key as the SQL stores do: the generation moves in the
// same step.
func (m *memKeys) revoke(hash string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.owners, hash)
	m.gen++
	m.commits++
}

func newTestAuth(t testing.TB, cache *KeyCache) (*Authenticator, *memKeys, string) {
	t.Helper()
	hasher, err := NewKeyHasher([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	key := NewKey()
	h := hasher.Hash(key)
	keys := &memKeys{owners: map[string]storage.KeyOwner{
		h: {KeyID: "key_1", KeyHash: h, KeyHint: KeyHint(key), AccountID: "acct_1", AccountName: "dev"},
	}}
	return NewAuthenticator(keys, hasher, cache, time.Minute), keys, key
}

func TestAuthenticate(t *testing.T) {
	a, _, key := newTestAuth(t, nil)
	unknown := NewKey()
	tests := []struct {
		name   string
		header string
		ok     bool
	}{
		{"valid", "Bearer " + key, true},
		{"lowercase scheme", "bearer " + key, true},
		{"missing", "", false},
		{"no scheme", key, false},
		{"scheme alone", "Bearer", false},
		{"scheme and space", "Bearer ", false},
		{"two spaces", "Bearer  " + key, false},
		{"trailing space", "Bearer " + key + " ", false},
		{"tab", "Bearer\t" + key, false},
		{"basic scheme", "Basic " + key, false},
		{"wrong prefix", "Bearer pk-" + key[3:], false},
		{"truncated", "Bearer " + key[:30], false},
		{"unknown", "Bearer " + unknown, false},
		{"64 KiB", "Bearer sk-" + strings.Repeat("a", 64<<10), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tt.header)
			if tt.ok {
				if err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				if p.KeyID != "key_1" || p.AccountID != "acct_1" || p.AccountName != "dev" {
					t.Fatalf("principal = %+v", p)
				}
				return
			}
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Status != 401 || ae.Code != "invalid_api_key" {
				t.Fatalf("err = %v, want a 401 invalid_api_key", err)
			}
			if strings.Contains(ae.Message, key) || (len(tt.header) > 7 && strings.Contains(ae.Message, tt.header[7:])) {
				t.Fatalf("message %q echoes the key", ae.Message)
			}
		})
	}
}

func TestAuthenticateStoreFailureIsNotAnAuthFailure(t *testing.T) {
	hasher, _ := NewKeyHasher([]byte(strings.Repeat("s", 32)))
	a := NewAuthenticator(failingKeys{&memKeys{}}, hasher, nil, 0)
	_, err := a.Authenticate(context.Background(), "Bearer "+NewKey())
	var ae *apierror.Error
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("err = %v, want the store's error unchanged", err)
	}
}

type failingKeys struct{ *memKeys }

func (failingKeys) LookupKey(context.Context, string) (storage.KeyOwner, error) {
	return storage.KeyOwner{}, errors.New("database is down")
}

func TestKeyCache(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	cache := NewKeyCache(100, func() time.Time { return now })
	a, keys, key := newTestAuth(t, cache)
	ctx := context.Background()
	auth := func() error { _, err := a.Authenticate(ctx, "Bearer "+key); return err }

	for i := 0; i < 3; i++ {
		if err := auth(); err != nil {
			t.Fatal(err)
		}
	}
	if keys.lookups != 1 || keys.balanceReads != 2 {
		t.Fatalf("%d lookups and %d balance reads, want 1 and 2 (one miss, two hits)", keys.lookups, keys.balanceReads)
	}
	// A cached key still gets its balance read fresh.
	keys.setBalance(777)
	p, err := a.Authenticate(ctx, "Bearer "+key)
	if err != nil || p.BalanceCents != 777 || keys.lookups != 1 {
		t.Fatalf("cached key: balance %d, %d lookups, err %v; want the fresh balance 777 without a lookup", p.BalanceCents, keys.lookups, err)
	}

	// Expiry bounds how long an idle key is kept.
	now = now.Add(2 * time.Minute)
	if err := auth(); err != nil {
		t.Fatal(err)
	}
	if keys.lookups != 2 {
		t.Fatalf("after ttl: %d lookups, want 2", keys.lookups)
	}

	// Another key's revocation moves the generation: the cached key is
	// looked up again, once, and still accepted.
	other := NewKey()
	otherHash := a.hasher.Hash(other)
	keys.mu.Lock()
	keys.owners[otherHash] = storage.KeyOwner{KeyID: "key_2", KeyHash: otherHash, AccountID: "acct_1"}
	keys.mu.Unlock()
	keys.revoke(otherHash)
	for i := 0; i < 2; i++ {
		if err := auth(); err != nil {
			t.Fatalf("after another key's revocation: %v", err)
		}
	}
	if keys.lookups != 3 {
		t.Fatalf("after another key's revocation: %d lookups, want 3", keys.lookups)
	}

	// A revocation, told to no one but the store, takes effect on the
	// very next request.
	keys.revoke(a.hasher.Hash(key))
	if err := auth(); err == nil {
		t.Fatal("revoked key still accepted")
	}
	if cache.Len() != 0 {
		t.Fatalf("revoked key still cached: %d entries", cache.Len())
	}
}

// TestKeyCacheWhileNothingCommitted: where the store reports its
// revision, a cached key costs no read until something is committed, and
// then one, which sees the new balance or the revocation.
func TestKeyCacheWhileNothingCommitted(t *testing.T) {
	cache := NewKeyCache(100, nil)
	a, keys, key := newTestAuth(t, cache)
	keys.tracked = true
	keys.setBalance(500)
	ctx := context.Background()
	balance := func() int64 {
		t.Helper()
		p, err := a.Authenticate(ctx, "Bearer "+key)
		if err != nil {
			t.Fatal(err)
		}
		return p.BalanceCents
	}
	for range 5 {
		if got := balance(); got != 500 {
			t.Fatalf("balance %d, want 500", got)
		}
	}
	if keys.lookups != 1 || keys.balanceReads != 0 {
		t.Fatalf("%d lookups and %d balance reads, want 1 and 0", keys.lookups, keys.balanceReads)
	}

	keys.setBalance(120)
	for range 3 {
		if got := balance(); got != 120 {
			t.Fatalf("after a commit: balance %d, want 120", got)
		}
	}
	if keys.lookups != 1 || keys.balanceReads != 1 {
		t.Fatalf("after a commit: %d lookups and %d balance reads, want 1 and 1", keys.lookups, keys.balanceReads)
	}

	keys.revoke(a.hasher.Hash(key))
	if _, err := a.Authenticate(ctx, "Bearer "+key); err == nil {
		t.Fatal("revoked key still accepted")
	}
}

func TestKeyCacheRevocationDuringLookup(t *testing.T) {
	cache := NewKeyCache(100, nil)
	a, keys, key := newTestAuth(t, cache)
	hash := a.hasher.Hash(key)
	// The store answers "active", then the key is revoked before the
	// lookup's result is cached.
	keys.during = func() {
		keys.during = nil
		keys.revoke(hash)
	}
	if _, err := a.Authenticate(context.Background(), "Bearer "+key); err != nil {
		t.Fatalf("first request (before revocation commits) failed: %v", err)
	}
	if _, err := a.Authenticate(context.Background(), "Bearer "+key); err == nil {
		t.Fatal("a lookup racing the revocation put the revoked key back in the cache")
	}
}

func TestKeyCacheBounded(t *testing.T) {
	cache := NewKeyCache(3, nil)
	for i := 0; i < 10; i++ {
		cache.put(NewKey(), storage.KeyOwner{}, storage.Revision{}, false)
		if cache.Len() > 3 {
			t.Fatalf("cache grew to %d entries, bound 3", cache.Len())
		}
	}
	// A lookup read under an older generation than one already seen is
	// not kept.
	cache.advance(5)
	cache.put("old", storage.KeyOwner{KeyGeneration: 4}, storage.Revision{}, false)
	if _, ok := cache.get([]byte("old"), time.Hour); ok {
		t.Fatal("a lookup of an older generation was cached")
	}
}
