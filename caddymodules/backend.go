package caddymodules

import (
	"context"
	"fmt"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// Shared state outlives the config that created it: a reload provisions the
// new config (taking a reference) before cleaning up the old one (dropping
// its reference), so pools and caches carry over and in-flight requests
// keep working.
var (
	backends     = caddy.NewUsagePool()
	redisClients = caddy.NewUsagePool()
)

// backend is a store with the key cache and watcher that belong to it.
type backend struct {
	store storage.Store

	cacheOnce sync.Once
	keyCache  *policy.KeyCache // nil until a config enables caching
	stop      context.CancelFunc
	watching  sync.WaitGroup
}

// keyCacheEntries bounds a node's key cache.
const keyCacheEntries = 100_000

func acquireBackend(s settings) (*backend, error) {
	v, _, err := backends.LoadOrNew(s.storeKey(), func() (caddy.Destructor, error) {
		store, err := openStore(context.Background(), s)
		if err != nil {
			return nil, err
		}
		return &backend{store: store, stop: func() {}}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*backend), nil
}

// cache returns the key cache, starting the revocation watcher that feeds
// it on first use, or nil when the store cannot broadcast revocations.
func (b *backend) cache() *policy.KeyCache {
	b.cacheOnce.Do(func() {
		w, ok := b.store.(storage.KeyWatcher)
		if !ok {
			return
		}
		b.keyCache = policy.NewKeyCache(keyCacheEntries, nil)
		ctx, cancel := context.WithCancel(context.Background())
		b.stop = cancel
		b.watching.Add(1)
		go func() {
			defer b.watching.Done()
			w.WatchKeys(ctx, b.keyCache)
		}()
	})
	return b.keyCache
}

// Destruct stops the watcher and closes the store.
func (b *backend) Destruct() error {
	b.stop()
	b.watching.Wait()
	return b.store.Close()
}

// openStore opens the store the settings name, applying migrations.
func openStore(ctx context.Context, s settings) (storage.Store, error) {
	if s.embedded() {
		st, err := sqlite.Open(ctx, s.sqlitePath(), storage.Options{})
		if err != nil {
			return nil, fmt.Errorf("opening SQLite store %s: %v", s.sqlitePath(), err)
		}
		return st, nil
	}
	st, err := postgres.Open(ctx, s.postgres, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("opening PostgreSQL store: %v", err)
	}
	return st, nil
}

type redisClient struct{ *redis.Client }

func (c redisClient) Destruct() error { return c.Close() }

func acquireRedis(rawURL string) (*redis.Client, error) {
	v, _, err := redisClients.LoadOrNew(rawURL, func() (caddy.Destructor, error) {
		opts, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redis URL: %v", err)
		}
		// Let every call give up at its context's deadline, so a Redis that
		// stops answering costs a request the limiter's timeout, not the
		// client's read timeout.
		opts.ContextTimeoutEnabled = true
		return redisClient{redis.NewClient(opts)}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(redisClient).Client, nil
}
