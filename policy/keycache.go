package policy

import (
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// KeyCache keeps recent key lookups so that authenticated requests need no
// store round trip. It is only correct while revocations reach it: it is a
// storage.KeySink, fed by the store's KeyWatcher, and caches nothing while
// the watcher reports that notifications may be lost.
//
// A lookup that races a revocation must not put the revoked key back: each
// revocation bumps a generation, and a lookup result is only stored if no
// revocation happened since the lookup began.
type KeyCache struct {
	ttl        time.Duration
	maxEntries int
	now        func() time.Time

	mu      sync.RWMutex
	live    bool
	gen     uint64
	entries map[string]cachedKey
}

type cachedKey struct {
	owner   storage.KeyOwner
	expires time.Time
}

// NewKeyCache returns an empty cache, not live until Live(true). Entries
// live for ttl at most (a bound on staleness should a notification ever be
// lost without the watcher noticing); at maxEntries the cache is emptied
// rather than tracking recency, which keeps the hot path to one map read.
func NewKeyCache(ttl time.Duration, maxEntries int, now func() time.Time) *KeyCache {
	if now == nil {
		now = time.Now
	}
	return &KeyCache{ttl: ttl, maxEntries: maxEntries, now: now, entries: make(map[string]cachedKey)}
}

// Live implements storage.KeySink.
func (c *KeyCache) Live(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	c.gen++
	clear(c.entries)
}

// Revoked implements storage.KeySink.
func (c *KeyCache) Revoked(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.entries, hash)
}

// Len reports the number of cached keys.
func (c *KeyCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

func (c *KeyCache) get(hash string) (storage.KeyOwner, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	live := c.live
	c.mu.RUnlock()
	if !ok || !live || c.now().After(e.expires) {
		return storage.KeyOwner{}, false
	}
	return e.owner, true
}

func (c *KeyCache) generation() (gen uint64, live bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen, c.live
}

func (c *KeyCache) put(hash string, owner storage.KeyOwner, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != gen {
		return
	}
	if len(c.entries) >= c.maxEntries {
		clear(c.entries)
	}
	c.entries[hash] = cachedKey{owner: owner, expires: c.now().Add(c.ttl)}
}

var _ storage.KeySink = (*KeyCache)(nil)
