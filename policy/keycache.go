package policy

import (
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// KeyCache keeps key lookups so that an authenticated request reads only
// its account's balance, which the balance gate needs fresh anyway, instead
// of looking its key up again.
//
// It stays exact without being told of revocations: every revocation, in
// any process on any node, raises the store's key generation in its own
// transaction (storage.KeyOwner.KeyGeneration), and the Authenticator
// reads the generation in the same statement as the balance
// (storage.Keys.KeyState). A cached lookup is used only while the
// generation it was read with is still the store's, so a revoked key is
// refused on its very next request, on every node, with no extra round
// trip. A request that finds the generation moved looks its key up again,
// and the entries of older generations are dropped.
//
// Where the store can tell without a query that nothing was committed
// since the balance was read (storage.Keys.Revision), that read is not
// made again either: nothing committed means no revocation, no top-up and
// no charge, so the cached balance and generation are still current. Any
// commit, in any process, sends the next request of every cached key to
// the store once. The embedded store tells at once (SQLite's wal-index),
// so a revocation still takes effect on the very next request. PostgreSQL
// tells this node's own commits at once and other processes' by
// notification: a key revoked by another node or the CLI is refused once
// the notification arrives, well under a millisecond later and at most
// 250 ms (beyond that the store reports no revision and every request
// reads).
type KeyCache struct {
	maxEntries int
	now        func() time.Time // nil: the system's clock (age)

	mu      sync.RWMutex
	gen     int64 // the newest key generation seen
	entries map[string]cachedKey
}

type cachedKey struct {
	owner storage.KeyOwner
	added time.Time
	// rev is the store's revision taken just before owner.BalanceCents
	// was read: while the store is still at rev, that balance is current.
	rev   storage.Revision
	revOK bool
}

// NewKeyCache returns an empty cache. At maxEntries the cache is emptied
// rather than tracking recency, which keeps the hot path to one map read.
func NewKeyCache(maxEntries int, now func() time.Time) *KeyCache {
	return &KeyCache{maxEntries: maxEntries, now: now, entries: make(map[string]cachedKey)}
}

// Len reports the number of cached keys.
func (c *KeyCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// get returns a cached lookup no older than maxAge. The age bound keeps
// the memory of keys that stopped being used, and bounds how long a key
// revoked behind the store's back (an UPDATE by hand, which raises no
// generation) stays usable.
func (c *KeyCache) get(hash []byte, maxAge time.Duration) (cachedKey, bool) {
	c.mu.RLock()
	e, ok := c.entries[string(hash)]
	c.mu.RUnlock()
	if !ok || c.age(e.added) > maxAge {
		return cachedKey{}, false
	}
	return e, true
}

// advance records that the store's key generation is gen, dropping every
// entry read under an older one.
func (c *KeyCache) advance(gen int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen > c.gen {
		c.gen = gen
		clear(c.entries)
	}
}

// put stores a lookup unless a newer generation has been seen since it
// was read: it could hold a key revoked in between.
func (c *KeyCache) put(hash string, owner storage.KeyOwner, rev storage.Revision, revOK bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if owner.KeyGeneration < c.gen {
		return
	}
	if owner.KeyGeneration > c.gen {
		c.gen = owner.KeyGeneration
		clear(c.entries)
	}
	if len(c.entries) >= c.maxEntries {
		clear(c.entries)
	}
	c.entries[hash] = cachedKey{owner: owner, added: c.clock(), rev: rev, revOK: revOK}
}

// refresh records a cached key's balance read under revision rev, keeping
// the entry's age: it was not looked up again.
func (c *KeyCache) refresh(hash string, balance int64, rev storage.Revision, revOK bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok {
		return
	}
	e.owner.BalanceCents, e.rev, e.revOK = balance, rev, revOK
	c.entries[hash] = e
}

// forget drops a key the store no longer knows.
func (c *KeyCache) forget(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hash)
}

// samePeriod reports whether e was read in the spend period of now: a
// key's period spend read in the one before is not its spend now.
func (c *KeyCache) samePeriod(e cachedKey) bool {
	return e.owner.Controls.SpendPeriod.Name(c.clock()) == e.owner.Period
}

// clock is the cache's time now.
func (c *KeyCache) clock() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// age is how long ago t was. On the system's clock time.Since reads the
// monotonic clock alone, where time.Now reads the wall clock too: every
// request's key is looked up.
func (c *KeyCache) age(t time.Time) time.Duration {
	if c.now == nil {
		return time.Since(t)
	}
	return c.now().Sub(t)
}
