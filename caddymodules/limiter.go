package caddymodules

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// Limiters and queues hold counts that must outlive a config reload: a
// stream admitted under the old config keeps its slot under the new one.
// They are pooled like the store, keyed by everything that shapes them.
var (
	limiters = caddy.NewUsagePool()
	queues   = caddy.NewUsagePool()
)

type pooled[T any] struct{ v T }

// Destruct sends what the value still holds back (the Redis limiter's
// gathered hold settlements); the ledger writer, closed before it, has
// committed the charges they follow.
func (p pooled[T]) Destruct() error {
	if f, ok := any(p.v).(interface{ Flush() }); ok {
		f.Flush()
	}
	return nil
}

func acquireLimiter(s node.Settings, c *limits.Config, client redis.UniversalClient, logger *zap.Logger) (limits.Limiter, error) {
	v, _, err := limiters.LoadOrNew(s.LimiterKey(c), func() (caddy.Destructor, error) {
		if s.Redis == "" {
			return pooled[limits.Limiter]{limits.NewLocal(limits.LocalConfig{})}, nil
		}
		// A config being validated only, never served, asks Redis nothing.
		if !validating.Load() {
			if err := limits.RefuseOldRedis(client, logger); err != nil {
				return nil, err
			}
		}
		r, err := limits.NewRedis(c.RedisConfig(client, s.RedisPrefix+"limits:", logger.Named("limits")))
		if err != nil {
			return nil, err
		}
		return pooled[limits.Limiter]{r}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(pooled[limits.Limiter]).v, nil
}

// acquireQueue returns the admission queue; its slots are counted in Redis
// (across nodes) when the limiter is on Redis, in process otherwise.
func acquireQueue(s node.Settings, q *limits.QueueSettings, limiter limits.Limiter) (*limits.Queue, error) {
	v, _, err := queues.LoadOrNew(s.QueueKey(q), func() (caddy.Destructor, error) {
		var slots limits.Leaser // in process
		if r, ok := limiter.(*limits.Redis); ok {
			slots = r
		}
		queue, err := limits.NewQueue(q.QueueConfig(slots))
		if err != nil {
			return nil, err
		}
		return pooled[*limits.Queue]{queue}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(pooled[*limits.Queue]).v, nil
}
