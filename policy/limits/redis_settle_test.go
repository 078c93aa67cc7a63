package limits

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// roundTrips counts the round trips that run scripts: one per command
// or pipeline, leaving out those that set up new connections.
type roundTrips struct{ n atomic.Int64 }

func runsScript(cmd redis.Cmder) bool { return cmd.Name() == "evalsha" || cmd.Name() == "eval" }

func (c *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if runsScript(cmd) {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, runsScript) {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// TestRedisHandedOverHoldsShareARoundTrip: the holds a ledger commit
// settles together are freed with one round trip, not one each, and
// every charge still reaches the mirror.
func TestRedisHandedOverHoldsShareARoundTrip(t *testing.T) {
	c := testRedisClient(t)
	trips := new(roundTrips)
	c.AddHook(trips)
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c)})

	const holds = 20
	settles := make([]func(int64), holds)
	for i := range settles {
		settles[i] = mustHold(t, l, 1000, 10, 10).Handover()
	}
	before := trips.n.Load()
	// As the ledger writer completes a batch: each record's completion
	// in a goroutine of its own.
	var wg sync.WaitGroup
	for _, settle := range settles {
		wg.Go(func() { settle(2) })
	}
	wg.Wait()
	settled(l)
	if n := trips.n.Load() - before; n != 1 {
		t.Errorf("settling %d handed-over holds took %d round trips, want 1", holds, n)
	}
	// Nothing held any more, and the mirror took the 20 charges of 2.
	mustHold(t, l, 1000, 1000, 1000-holds*2).Release()
}
