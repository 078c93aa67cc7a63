package limits

import (
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// runsScript tells the commands that run a script: the round trips that
// settle holds.
func runsScript(cmd redis.Cmder) bool { return cmd.Name() == "evalsha" || cmd.Name() == "eval" }

// TestRedisHandedOverHoldsShareARoundTrip: the holds a ledger commit
// settles together are freed with one round trip, not one each, and
// every charge still reaches the mirror.
func TestRedisHandedOverHoldsShareARoundTrip(t *testing.T) {
	l, trips := countedRedis(t, runsScript)

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
