package limits

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// failHook fails the next armed pipelines or commands that match, as a
// dropped connection or a timeout would: before they reach Redis, or
// (lost) after Redis ran them, with only the answer lost.
type failHook struct {
	match func(redis.Cmder) bool
	lost  bool         // Redis runs the commands; the answer is lost
	armed atomic.Int32 // failures still to cause
	hit   atomic.Int32 // failures caused
}

var errInjected = errors.New("injected: connection reset")

func (h *failHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failHook) fails(cmds []redis.Cmder) bool {
	if slices.ContainsFunc(cmds, h.match) && h.armed.Add(-1) >= 0 {
		h.hit.Add(1)
		return true
	}
	return false
}

func (h *failHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.fails([]redis.Cmder{cmd}) {
			return next(ctx, cmd)
		}
		if h.lost {
			_ = next(ctx, cmd)
		}
		cmd.SetErr(errInjected)
		return errInjected
	}
}

func (h *failHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.fails(cmds) {
			return next(ctx, cmds)
		}
		if h.lost {
			_ = next(ctx, cmds)
		}
		for _, c := range cmds {
			c.SetErr(errInjected)
		}
		return errInjected
	}
}

// failingRedis is a Redis limiter on a client of its own with h installed,
// and a lease TTL far longer than the test, so that only a release can
// free what it holds.
func failingRedis(t *testing.T, h *failHook) *Redis {
	t.Helper()
	c := testRedisClient(t)
	c.AddHook(h)
	// The breaker stays out of it: these tests are about one failed call.
	return newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: time.Hour,
		Breaker: BreakerConfig{Failures: 1000}})
}

// eventually polls ok every 10ms for up to 5s, far less than the lease
// TTL of failingRedis.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 5s", what)
		}
	}
}

func slotFree(l *Redis, key string) func() bool {
	return func() bool {
		lease, err := l.Acquire(context.Background(), key, 1)
		lease.Release()
		return err == nil
	}
}

// TestRedisReleaseRetriedAfterAFailedCall: a stream slot whose release
// failed on its way to Redis is released again, not left until its lease
// expires (an hour here), and so are the releases of other accounts that
// went in the same pipeline.
func TestRedisReleaseRetriedAfterAFailedCall(t *testing.T) {
	h := &failHook{match: func(cmd redis.Cmder) bool { return cmd.Name() == "zrem" }}
	l := failingRedis(t, h)
	a, b := acquire(t, l, "a", 1), acquire(t, l, "b", 1)
	h.armed.Store(1)
	a.Release()
	b.Release()
	eventually(t, "the slots whose release failed are free", func() bool { return slotFree(l, "a")() && slotFree(l, "b")() })
	if h.hit.Load() != 1 {
		t.Fatalf("%d releases failed; the test meant one", h.hit.Load())
	}
}

// TestRedisReleaseTriedUntilWhatItFreesExpired: a release Redis never
// confirms is tried again until what it frees has expired in Redis by
// itself: a lease TTL after the last renewal, and the second an expiry
// is rounded up by, not just the TTL.
func TestRedisReleaseTriedUntilWhatItFreesExpired(t *testing.T) {
	h := &failHook{match: func(cmd redis.Cmder) bool { return cmd.Name() == "zrem" }}
	c := testRedisClient(t)
	c.AddHook(h)
	core, logs := observer.New(zap.WarnLevel)
	ttl := 200 * time.Millisecond
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: ttl, Timeout: 100 * time.Millisecond,
		Breaker: BreakerConfig{Failures: 1000}, Logger: zap.New(core)})
	lease := acquire(t, l, "k", 1)
	h.armed.Store(1000)
	released := time.Now()
	lease.Release()
	const gaveUp = "redis limiter gave up a release it could not send; what it frees has expired"
	eventually(t, "the release is given up", func() bool { return logs.FilterMessage(gaveUp).Len() > 0 })
	h.armed.Store(0)
	if took := logs.FilterMessage(gaveUp).All()[0].Time.Sub(released); took < ttl+time.Second {
		t.Fatalf("the release was given up %v after it was asked for, before its slot's TTL and a second (%v)", took, ttl+time.Second)
	}
	if !slotFree(l, "k")() {
		t.Fatal("the slot of the release given up is still taken")
	}
}

// TestRedisSettlementRetriedAfterAFailedCall: a hold whose settlement
// failed before it reached Redis is settled again: the hold is freed and
// the mirror takes the charge, once.
func TestRedisSettlementRetriedAfterAFailedCall(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := map[bool]string{false: "not sent", true: "answer lost"}[lost]
		t.Run(name, func(t *testing.T) {
			h := &failHook{match: runs(settleScript), lost: lost}
			l := failingRedis(t, h)
			mustHold(t, l, 100, 1, 1).Release() // the settle script is loaded
			l.Flush()
			hold := mustHold(t, l, 100, 10, 10)
			h.armed.Store(1)
			hold.Handover().Settle(7)
			// 93 left and nothing held: 93 can be held, 94 cannot.
			eventually(t, "the hold whose settlement failed is freed and charged", func() bool {
				a, err := l.Admit(context.Background(), AdmitRequest{Key: "k",
					Reserve: Reservation{Account: "acct", Balance: 100, Min: 93, CheckOnly: true}})
				return err == nil && !a.Fallback
			})
			l.Flush()
			_, err := l.Admit(context.Background(), AdmitRequest{Key: "k",
				Reserve: Reservation{Account: "acct", Balance: 100, Min: 94, CheckOnly: true}})
			var be *BalanceError
			if !errors.As(err, &be) || be.Available != 93 {
				t.Fatalf("after a charge of 7 settled twice over: %v, want 93 available", err)
			}
			if h.hit.Load() != 1 {
				t.Fatalf("%d settlements failed; the test meant one", h.hit.Load())
			}
		})
	}
}

// TestRedisAbandonedAdmissionIsUndone: an admission whose caller went
// away while it waited behind the pipeline in flight still runs, later;
// the slot and the hold it takes then are released, not left to expire.
func TestRedisAbandonedAdmissionIsUndone(t *testing.T) {
	c := testRedisClient(t)
	gate := &gateHook{armed: make(chan struct{}), entered: make(chan struct{}), open: make(chan struct{})}
	c.AddHook(gate)
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: time.Hour})
	mustHold(t, l, 100, 1, 1).Release() // the script is loaded
	l.Flush()
	close(gate.armed)

	first := make(chan Admission, 1)
	go func() {
		a, _ := l.Admit(context.Background(), AdmitRequest{Key: "first", StreamLimit: 1, WantLease: true})
		first <- a
	}()
	<-gate.entered // the first admission is in flight
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := l.Admit(ctx, AdmitRequest{Key: "k", StreamLimit: 1, WantLease: true,
			Reserve: Reservation{Account: "acct", Balance: 100, Want: 10, Min: 1}})
		gaveUp <- err
	}()
	eventually(t, "the second admission queues", func() bool {
		l.admits.mu.Lock()
		defer l.admits.mu.Unlock()
		return len(l.admits.waiting) == 1
	})
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned admission: %v, want its context's error", err)
	}
	time.Sleep(50 * time.Millisecond) // what the caller left behind runs first
	close(gate.open)
	(<-first).Lease.Release()

	eventually(t, "the abandoned admission's slot is free", slotFree(l, "k"))
	eventually(t, "the abandoned admission's hold is freed", func() bool {
		held, err := l.Held(context.Background(), "acct")
		return err == nil && held == 0
	})
}
