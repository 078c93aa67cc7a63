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
// Notifications are asynchronous: a key revoked through one node is refused
// by another once the notification arrives (normally well under a
// millisecond), not strictly on the very next request. That is why caching
// is an operator's choice, off by default.
//
// A lookup that races a revocation must not put the revoked key back: each
// revocation bumps a generation, and a lookup result is only stored if no
// revocation happened since the lookup began.
type KeyCache struct {
	maxEntries int
	now        func() time.Time

	mu      sync.RWMutex
	live    bool
	gen     uint64
	entries map[string]cachedKey
}

type cachedKey struct {
	owner storage.KeyOwner
	added time.Time
}

// NewKeyCache returns an empty cache, not live until Live(true). At
// maxEntries the cache is emptied rather than tracking recency, which keeps
// the hot path to one map read.
func NewKeyCache(maxEntries int, now func() time.Time) *KeyCache {
	if now == nil {
		now = time.Now
	}
	return &KeyCache{maxEntries: maxEntries, now: now, entries: make(map[string]cachedKey)}
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

// get returns a cached lookup no older than maxAge. The age bound limits
// the damage should a notification ever be lost without the watcher
// noticing.
func (c *KeyCache) get(hash string, maxAge time.Duration) (storage.KeyOwner, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	live := c.live
	c.mu.RUnlock()
	if !ok || !live || c.now().Sub(e.added) > maxAge {
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
	c.entries[hash] = cachedKey{owner: owner, added: c.now()}
}

var _ storage.KeySink = (*KeyCache)(nil)
