package caddymodules

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// Shared state outlives the config that created it: a reload provisions the
// new config (taking a reference) before cleaning up the old one (dropping
// its reference), so pools and caches carry over and in-flight requests
// keep working.
var (
	backends     = caddy.NewUsagePool()
	redisClients = caddy.NewUsagePool()
)

// backend is a store with the key cache, watcher and ledger writer that
// belong to it.
type backend struct {
	store storage.Store
	// ledger commits the charges of every config's requests in batches;
	// it lives as long as the store, so that a reload neither loses nor
	// splits its queue.
	ledger *billing.LedgerWriter

	reconcileOnce sync.Once
	reconciling   sync.WaitGroup
	endReconcile  context.CancelFunc // nil until a sweep started

	cacheOnce sync.Once
	keyCache  *policy.KeyCache // nil until a config enables caching
	stop      context.CancelFunc
	watching  sync.WaitGroup
}

// keyCacheEntries bounds a node's key cache.
const keyCacheEntries = 100_000

func acquireBackend(s node.Settings, ledger *billing.LedgerSettings, logger *zap.Logger) (*backend, error) {
	wc := ledger.WriterConfig()
	v, loaded, err := backends.LoadOrNew(s.StoreKey(), func() (caddy.Destructor, error) {
		store, err := node.OpenStore(context.Background(), s)
		if err != nil {
			return nil, err
		}
		wc.Store, wc.RequestLog = store, store
		wc.Logger = slogFor(logger.Named("ledger"))
		return &backend{store: store, ledger: billing.NewLedgerWriter(wc), stop: func() {}}, nil
	})
	if err != nil {
		return nil, err
	}
	b := v.(*backend)
	if loaded {
		// A reload: the writer and its queue carry over, in the new
		// config's tuning.
		b.ledger.Tune(wc.MaxDelay, wc.MaxBatch)
		b.ledger.SetRequestLogRetention(wc.RequestLogRetention)
	}
	return b, nil
}

// reconcileTimeout bounds the start-up sweep of mirrored balances.
const reconcileTimeout = 30 * time.Second

// reconcile starts lowering the balances that limiter mirrors in Redis to
// the ledger's where a node killed between committing a charge and
// settling its hold left them too high (limits.Redis.ReconcileBalances),
// once in the backend's life: when the process starts, not on every
// reload. It runs in the background, so that a Redis that does not answer
// does not hold up the start (the limiter fails open or closed as
// configured meanwhile). An in-process limiter starts empty and seeds its
// mirrors from the ledger; it needs nothing. A sweep that fails is
// logged: the mirrors it missed still expire and are seeded anew within
// the limiter's balance TTL.
func (b *backend) reconcile(limiter limits.Limiter, logger *zap.Logger) {
	r, ok := limiter.(*limits.Redis)
	if !ok {
		return
	}
	b.reconcileOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), reconcileTimeout)
		b.endReconcile = cancel
		b.reconciling.Add(1)
		guard.Go(reconcileGoroutine, func() {
			defer b.reconciling.Done()
			defer cancel()
			res, err := r.ReconcileBalances(ctx, b.store.Balance)
			fields := []zap.Field{zap.Int("mirrors", res.Mirrors), zap.Int("lowered", res.Lowered), zap.Int("skipped", res.Skipped)}
			if err != nil {
				logger.Warn("reconciling mirrored balances with the ledger", append(fields, zap.Error(err))...)
				return
			}
			logger.Info("mirrored balances reconciled with the ledger", fields...)
		})
	})
}

// reconcileGoroutine names the start-up sweep as internal/guard counts
// its panics. A sweep that panics leaves the mirrors it missed to expire,
// as one that fails does.
var reconcileGoroutine = guard.Name("balance_reconcile")

// cache returns the node's key cache. It needs no watcher: the store's
// key generation, read with every balance, keeps it exact (policy.KeyCache).
func (b *backend) cache() *policy.KeyCache {
	b.cacheOnce.Do(func() {
		b.keyCache = policy.NewKeyCache(keyCacheEntries, nil)
	})
	return b.keyCache
}

// Destruct stops the watcher and the start-up sweep, commits the charges
// still queued, and closes the store.
func (b *backend) Destruct() error {
	b.stop()
	b.watching.Wait()
	b.reconcileOnce.Do(func() {}) // no sweep starts from now on
	if b.endReconcile != nil {
		b.endReconcile()
	}
	b.reconciling.Wait()
	b.ledger.Close()
	return b.store.Close()
}

type redisClient struct{ redis.UniversalClient }

func (c redisClient) Destruct() error { return c.Close() }

func acquireRedis(s node.Settings) (redis.UniversalClient, error) {
	v, _, err := redisClients.LoadOrNew(s.RedisKey(), func() (caddy.Destructor, error) {
		c, err := limits.NewRedisClient(s.Redis, s.RedisMode)
		if err != nil {
			return nil, fmt.Errorf("redis URL: %v", err)
		}
		return redisClient{c}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(redisClient).UniversalClient, nil
}
