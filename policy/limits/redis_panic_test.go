package limits

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// panicHook is a client hook that panics, as a bug in the client would,
// on the next armed commands or pipelines that match.
type panicHook struct {
	match func(redis.Cmder) bool
	armed atomic.Int32 // panics still to throw
	hit   atomic.Int32 // panics thrown
}

func (h *panicHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *panicHook) fire(cmds ...redis.Cmder) {
	if slices.ContainsFunc(cmds, h.match) && h.armed.Add(-1) >= 0 {
		h.hit.Add(1)
		panic("redis client bug")
	}
}

func (h *panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.fire(cmd)
		return next(ctx, cmd)
	}
}

func (h *panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.fire(cmds...)
		return next(ctx, cmds)
	}
}

// runs tells a command that runs script.
func runs(script *redis.Script) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		args := cmd.Args()
		return cmd.Name() == "evalsha" && len(args) > 1 && args[1] == script.Hash()
	}
}

// panickyRedis is a Redis limiter on a client of its own with h installed.
func panickyRedis(t *testing.T, h *panicHook, cfg RedisConfig) *Redis {
	t.Helper()
	c := testRedisClient(t)
	c.AddHook(h)
	cfg.Client, cfg.Prefix = c, testPrefix(t, c)
	return newTestRedis(t, cfg)
}

// TestRedisPanicInTheClientFailsOnlyItsCall: a panic while admitting is a
// failed call (here, fail-open: the in-process fallback decides), not the
// end of the process; the admissions queued behind it are answered, and
// the node goes on admitting through Redis.
func TestRedisPanicInTheClientFailsOnlyItsCall(t *testing.T) {
	h := &panicHook{match: runs(admitScript)}
	// The breaker would open after a few failed calls; this test is about
	// what follows each.
	l := panickyRedis(t, h, RedisConfig{Breaker: BreakerConfig{Failures: 1000}})
	before := guard.Count(redisAdmitGoroutine) + guard.Count(redisCallGoroutine)

	h.armed.Store(1)
	a, err := l.Admit(context.Background(), AdmitRequest{Key: "k", StreamLimit: 2, WantLease: true})
	if err != nil || !a.Fallback {
		t.Fatalf("the admission whose call panicked: %+v, %v; want it decided by the fallback", a, err)
	}
	a.Lease.Release()

	// Many at once, so that some queue behind a pipeline that panics.
	h.armed.Store(3)
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			a, err := l.Admit(context.Background(), AdmitRequest{Key: "many", Rate: Rate{Limit: 1000, Period: time.Minute}})
			if err != nil {
				t.Errorf("admission: %v", err)
			}
			a.Lease.Release()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("admissions still waiting 10s after the panics: the queue is stuck")
	}

	h.armed.Store(0)
	a, err = l.Admit(context.Background(), AdmitRequest{Key: "after", StreamLimit: 1, WantLease: true})
	if err != nil || a.Fallback {
		t.Fatalf("after the panics: %+v, %v; want Redis to decide again", a, err)
	}
	a.Lease.Release()
	if n := guard.Count(redisAdmitGoroutine) + guard.Count(redisCallGoroutine) - before; n != uint64(h.hit.Load()) || n < 2 {
		t.Errorf("%d panics counted, %d thrown", n, h.hit.Load())
	}
}

// TestRedisPanicWhileReleasingFinishesTheBatch: releases whose pipeline
// panics are finished as unsent and tried again, so that the slot comes
// back long before its lease expires, Flush, which a graceful stop waits
// on, returns, and the next releases are sent as usual.
func TestRedisPanicWhileReleasingFinishesTheBatch(t *testing.T) {
	h := &panicHook{match: func(cmd redis.Cmder) bool { return cmd.Name() == "zrem" }}
	l := panickyRedis(t, h, RedisConfig{LeaseTTL: time.Hour})
	before := guard.Count(redisCallGoroutine)

	h.armed.Store(1)
	acquire(t, l, "k", 1).Release()
	flushed := make(chan struct{})
	go func() { l.Flush(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("Flush still waiting 10s after the release's pipeline panicked")
	}
	// The batch is finished as the panic unwinds, just before the panic
	// is counted.
	for deadline := time.Now().Add(5 * time.Second); guard.Count(redisCallGoroutine)-before != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("panics counted %d, want 1", guard.Count(redisCallGoroutine)-before)
		}
	}
	if h.hit.Load() != 1 {
		t.Fatalf("panics thrown %d, want 1", h.hit.Load())
	}
	// The slot is free again, its release tried again; another key's is
	// freed at once, by the same goroutine's next round.
	acquire(t, l, "k", 1).Release()
	acquire(t, l, "other", 1).Release()
	l.Flush()
	acquire(t, l, "other", 1).Release()
}

// TestRedisRenewalsGoOnAfterAPanic: a renewal whose pipeline panics is
// tried again at the next tick, and the lease it renews is kept.
func TestRedisRenewalsGoOnAfterAPanic(t *testing.T) {
	h := &panicHook{match: runs(renewScript)}
	h.armed.Store(1)
	l := panickyRedis(t, h, RedisConfig{LeaseTTL: heartbeatTTL, Timeout: time.Second})
	l.renewEvery = 50 * time.Millisecond
	renewed := make(chan bool, 1000)
	l.onRenew = func(kept bool) { renewed <- kept }
	lease := acquire(t, l, "k", 1)
	defer lease.Release()
	waitRenewals(t, renewed, "lease")
	if h.hit.Load() != 1 {
		t.Fatalf("the renewals panicked %d times; the test meant once", h.hit.Load())
	}
	if _, err := l.Acquire(context.Background(), "k", 1); err == nil {
		t.Fatal("the renewed lease's slot was free")
	}
}
