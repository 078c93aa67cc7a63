package limits

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// testRedisClient connects to the test Redis (internal/testenv: the one
// make test runs, or $SWITCHYARD_TEST_REDIS) and fails the test when it
// does not answer: these tests are never skipped.
func testRedisClient(t testing.TB) *redis.Client {
	t.Helper()
	url, _ := testenv.Redis(t)
	opts, err := RedisOptions(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// redisAddr is the test Redis's host:port.
func redisAddr(t *testing.T) string {
	t.Helper()
	return testRedisClient(t).Options().Addr
}

// testPrefix is a key prefix of the test's own; its keys, and redis_rate's
// under "rate:" and the prefix, are deleted when the test ends.
func testPrefix(t testing.TB, _ *redis.Client) string {
	t.Helper()
	_, prefix := testenv.Redis(t)
	return prefix
}

func newTestRedis(t *testing.T, cfg RedisConfig) *Redis {
	t.Helper()
	r, err := NewRedis(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tripCounter is a client hook that counts round trips: a command, or a
// pipeline, for which counts holds of it or of one of its commands.
type tripCounter struct {
	counts func(redis.Cmder) bool
	n      atomic.Int64
}

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c.counts(cmd) {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, c.counts) {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// countedRedis is a Redis limiter on a client of its own whose round
// trips that counts picks are counted.
func countedRedis(t *testing.T, counts func(redis.Cmder) bool) (*Redis, *tripCounter) {
	t.Helper()
	c := testRedisClient(t)
	trips := &tripCounter{counts: counts}
	c.AddHook(trips)
	return newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c)}), trips
}

func TestRedis(t *testing.T) {
	c := testRedisClient(t)
	runSuite(t, func(t *testing.T) harness {
		clock := newFakeClock()
		prefix := testPrefix(t, c)
		return harness{clock: clock, node: func(t *testing.T) Limiter {
			return newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, Now: clock.Now})
		}}
	})
}

// TestRedisServerClock runs checks that need no clock of their own with
// the production setting: time from Redis, GCRA through redis_rate.
func TestRedisServerClock(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: prefix})
	r := Rate{Limit: 3, Period: time.Hour}
	for i := range 3 {
		res := allow(t, l, "k", r)
		if !res.Allowed || res.Remaining != 2-i {
			t.Fatalf("request %d: %+v", i+1, res)
		}
	}
	const sec = time.Second // the server clock moves during the test
	res := allow(t, l, "k", r)
	if res.Allowed || res.RetryAfter < 20*time.Minute-sec || res.RetryAfter > 20*time.Minute ||
		res.ResetAfter < time.Hour-sec || res.ResetAfter > time.Hour {
		t.Fatalf("4th request: %+v, want refused, retry after 20m, reset after 1h", res)
	}
	if n, err := c.Exists(context.Background(), "rate:"+prefix+"{k}").Result(); err != nil || n != 1 {
		t.Fatalf("redis_rate key: %d, %v", n, err)
	}
	// The admit script shares redis_rate's key and format.
	a, err := l.Admit(context.Background(), AdmitRequest{Key: "k", Rate: r, StreamLimit: 1, WantLease: true})
	if _, ok := errors.AsType[*LimitError](err); !ok || a.Lease != nil || a.Rate.RetryAfter < 20*time.Minute-sec {
		t.Fatalf("Admit after redis_rate used the budget: %+v, %v", a, err)
	}

	// A rolling window and a lease on the server clock.
	w := Rate{Limit: 2, Period: time.Hour, Rolling: true}
	allow(t, l, "w", w)
	allow(t, l, "w", w)
	if res := allow(t, l, "w", w); res.Allowed || res.RetryAfter < time.Hour-sec {
		t.Fatalf("3rd request in a rolling window of 2: %+v", res)
	}
	lease := acquire(t, l, "s", 1)
	_, err = l.Acquire(context.Background(), "s", 1)
	wantStreamRefusal(t, err, 1)
	lease.Release()
	acquire(t, l, "s", 1).Release()
}

// TestRedisLeaseExpiresAfterCrash: a holder that stops renewing, as a
// process killed with SIGKILL does, frees its slot within the lease TTL.
func TestRedisLeaseExpiresAfterCrash(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	clock := newFakeClock()
	cfg := RedisConfig{Client: c, Prefix: prefix, Now: clock.Now, LeaseTTL: 30 * time.Second}
	crashed, survivor := newTestRedis(t, cfg), newTestRedis(t, cfg)

	lease := acquire(t, crashed, "k", 1)
	lease.abandon() // renewals stop, nothing is removed
	_, err := survivor.Acquire(context.Background(), "k", 1)
	wantStreamRefusal(t, err, 1)
	clock.Advance(29 * time.Second)
	_, err = survivor.Acquire(context.Background(), "k", 1)
	wantStreamRefusal(t, err, 1)
	clock.Advance(time.Second)
	acquire(t, survivor, "k", 1)
}

// TestRedisLeaseRenewal: renewals keep a lease past its TTL, and a lease
// that expired anyway is reported lost rather than brought back.
func TestRedisLeaseRenewal(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	clock := newFakeClock()
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, Now: clock.Now, LeaseTTL: 30 * time.Second})
	lease := acquire(t, l, "k", 1)
	clock.Advance(20 * time.Second)
	if kept, err := l.renew([]string{l.leaseKey("", "k")}, lease.ID()); !kept || err != nil {
		t.Fatalf("renew: %v, %v", kept, err)
	}
	clock.Advance(20 * time.Second) // 40s after acquiring, 20s after renewing
	_, err := l.Acquire(context.Background(), "k", 1)
	wantStreamRefusal(t, err, 1)
	clock.Advance(11 * time.Second)
	other := acquire(t, l, "k", 1)
	if kept, err := l.renew([]string{l.leaseKey("", "k")}, lease.ID()); kept || err != nil {
		t.Fatalf("renew of an expired lease: %v, %v; want not kept", kept, err)
	}
	lease.Release() // must not remove the other holder's slot
	_, err = l.Acquire(context.Background(), "k", 1)
	wantStreamRefusal(t, err, 1)
	other.Release()
}

// TestRedisHeartbeat: the renewing goroutine renews on its own, on the
// server clock, past the lease TTL.
func TestRedisHeartbeat(t *testing.T) {
	l, renewed := newHeartbeatRedis(t)
	lease := acquire(t, l, "k", 1)
	waitRenewals(t, renewed, "lease")
	_, err := l.Acquire(context.Background(), "k", 1)
	wantStreamRefusal(t, err, 1)
	lease.Release()
	acquire(t, l, "k", 1).abandon()

	// Abandoned, it expires on the server clock.
	deadline := time.Now().Add(heartbeatTTL + 5*time.Second)
	for {
		lease, err := l.Acquire(context.Background(), "k", 1)
		if err == nil {
			lease.Release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("abandoned lease still held 5s after its %s TTL", heartbeatTTL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heartbeatTTL is the lease TTL of the heartbeat tests, on the server
// clock. The renewals tick every 50ms, so a renewal is late enough to
// lose a lease only when a loaded machine stalls the renewing goroutine
// for the whole TTL; what is tested is that they go on by themselves.
const heartbeatTTL = 2 * time.Second

// newHeartbeatRedis returns a limiter with a heartbeatTTL lease TTL that
// tells every renewal on the channel: true when it kept what it renewed.
// Its calls' timeout is wide: a call timing out on a loaded machine is
// not what these tests are about, and enough of them would open the
// breaker and send the admissions to the in-process fallback.
func newHeartbeatRedis(t *testing.T) (*Redis, <-chan bool) {
	c := testRedisClient(t)
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: heartbeatTTL, Timeout: time.Second})
	l.renewEvery = 50 * time.Millisecond
	renewed := make(chan bool, 1000)
	l.onRenew = func(kept bool) { renewed <- kept }
	return l, renewed
}

// waitRenewals waits for renewals until a lease TTL has passed since it
// was called and at least three renewals came, and fails t when one lost
// the held lease or hold (what): what was taken before the call outlived
// its TTL by the renewals alone.
func waitRenewals(t *testing.T, renewed <-chan bool, what string) {
	t.Helper()
	start := time.Now()
	for i := 0; i < 3 || time.Since(start) <= heartbeatTTL; i++ {
		select {
		case kept := <-renewed:
			if !kept {
				t.Fatalf("renewal %d lost the %s", i+1, what)
			}
		case <-time.After(heartbeatTTL + 5*time.Second):
			t.Fatalf("renewal %d did not happen", i+1)
		}
	}
}

// faultServer stands in for Redis: it forwards to the real one, or
// accepts connections and never answers.
type faultServer struct {
	ln       net.Listener
	upstream string // the real Redis, host:port
	silent   atomic.Bool
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

func newFaultServer(t *testing.T) *faultServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &faultServer{ln: ln, upstream: redisAddr(t)}
	s.silent.Store(true)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *faultServer) addr() string { return s.ln.Addr().String() }

func (s *faultServer) serve() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns = append(s.conns, conn)
		s.mu.Unlock()
		if s.silent.Load() {
			continue
		}
		up, err := net.Dial("tcp", s.upstream)
		if err != nil {
			conn.Close()
			continue
		}
		s.mu.Lock()
		s.conns = append(s.conns, up)
		s.mu.Unlock()
		go func() { io.Copy(up, conn); up.Close() }()
		go func() { io.Copy(conn, up); conn.Close() }()
	}
}

func (s *faultServer) close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}

// closedPort is an address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// countingHook counts commands the client sends.
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRedisDown: with Redis unreachable or hanging, every call returns
// within the timeout, and each policy does what it says.
func TestRedisDown(t *testing.T) {
	const timeout = 50 * time.Millisecond
	silent := newFaultServer(t)
	servers := []struct {
		name string
		addr string
		// ends: the client ends calls at their context's deadline, and
		// a lone admission is sent by its caller (Redis.sendOwn).
		ends bool
	}{
		{"closed port", closedPort(t), false},
		// The client leaves ContextTimeoutEnabled off here, as a careless
		// setup would: its own read timeout is seconds.
		{"silent server", silent.addr(), false},
		{"closed port, deadlines", closedPort(t), true},
		{"silent server, deadlines", silent.addr(), true},
	}
	req := AdmitRequest{Key: "k", Rate: Rate{Limit: 6, Period: time.Minute}, StreamLimit: 4, WantLease: true}
	tests := []struct {
		name       string
		rate       FailurePolicy
		streams    FailurePolicy
		req        AdmitRequest
		wantLimit  string // of the UnavailableError; "" for fallback
		wantLeases int    // the fallback's scaled stream limit (FallbackNodes 2)
	}{
		{name: "fail open", req: req, wantLeases: 2},
		{name: "rate fails closed", rate: FailClosed, req: req, wantLimit: LimitRequests},
		{name: "streams fail closed", streams: FailClosed, req: req, wantLimit: LimitStreams},
		{name: "streams fail closed, no lease asked", streams: FailClosed, req: AdmitRequest{Key: "k", Rate: req.Rate}},
	}
	for _, srv := range servers {
		for _, tt := range tests {
			t.Run(srv.name+"/"+tt.name, func(t *testing.T) {
				c := redis.NewClient(&redis.Options{Addr: srv.addr, MaxRetries: -1, ContextTimeoutEnabled: srv.ends})
				defer c.Close()
				logs, observed := observer.New(zap.WarnLevel)
				l := newTestRedis(t, RedisConfig{
					Client: c, Timeout: timeout, RatePolicy: tt.rate, StreamPolicy: tt.streams,
					FallbackNodes: 2, Logger: zap.New(logs),
				})
				start := time.Now()
				a, err := l.Admit(context.Background(), tt.req)
				if took := time.Since(start); took > timeout+time.Second {
					t.Fatalf("Admit took %s with a %s timeout", took, timeout)
				}
				if tt.wantLimit != "" {
					ue, ok := errors.AsType[*UnavailableError](err)
					if !ok || ue.Limit != tt.wantLimit || !errors.Is(err, ErrUnavailable) {
						t.Fatalf("error %v, want UnavailableError for %s", err, tt.wantLimit)
					}
					if e := APIError(err); e.Status != 503 {
						t.Fatalf("API error %+v, want 503", e)
					}
					if s := l.Stats(); s.Unavailable != 1 || s.Fallbacks != 0 {
						t.Fatalf("stats %+v", s)
					}
					return
				}
				if err != nil || !a.Fallback || !a.Rate.Allowed || a.Rate.Limit != 3 {
					t.Fatalf("Admit: %+v, %v; want admitted by the fallback at half the limit", a, err)
				}
				if observed.FilterMessage("redis limiter call failed").Len() != 1 {
					t.Fatalf("logged %v, want one warning", observed.All())
				}
				if tt.req.WantLease {
					if a.Lease == nil {
						t.Fatal("no lease from the fallback")
					}
					_, err := l.Admit(context.Background(), tt.req)
					if err != nil {
						t.Fatal(err)
					}
					_, err = l.Admit(context.Background(), tt.req)
					wantStreamRefusal(t, err, tt.wantLeases)
				}
				if s := l.Stats(); s.Fallbacks == 0 || s.Failures == 0 {
					t.Fatalf("stats %+v, want fallbacks and failures counted", s)
				}
			})
		}
	}
}

// TestRedisAllowDown covers the redis_rate path of Allow.
func TestRedisAllowDown(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: closedPort(t), MaxRetries: -1})
	defer c.Close()
	r := Rate{Limit: 1, Period: time.Hour}
	open := newTestRedis(t, RedisConfig{Client: c})
	if res, err := open.Allow(context.Background(), "k", r); err != nil || !res.Allowed {
		t.Fatalf("fail open: %+v, %v", res, err)
	}
	if res, err := open.Allow(context.Background(), "k", r); err != nil || res.Allowed {
		t.Fatalf("fail open, second: %+v, %v; want refused by the fallback", res, err)
	}
	closed := newTestRedis(t, RedisConfig{Client: c, RatePolicy: FailClosed})
	if _, err := closed.Allow(context.Background(), "k", r); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("fail closed: %v", err)
	}
}

// TestRedisBreaker: after repeated failures Redis is skipped, probed
// after the cool-down, and used again once it answers.
func TestRedisBreaker(t *testing.T) {
	testRedisClient(t) // the real Redis must be up for the recovery part
	srv := newFaultServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	hook := &countingHook{}
	c.AddHook(hook)
	clock := newFakeClock()
	prefix := testPrefix(t, testRedisClient(t))
	l := newTestRedis(t, RedisConfig{
		Client: c, Prefix: prefix, Timeout: 50 * time.Millisecond, Now: clock.Now,
		Breaker: BreakerConfig{Failures: 3, CoolDown: time.Second, MaxCoolDown: 3 * time.Second},
	})
	req := AdmitRequest{Key: "k", Rate: Rate{Limit: 100, Period: time.Minute}}
	admit := func() Admission {
		t.Helper()
		a, err := l.Admit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for range 3 {
		admit()
	}
	if !l.Stats().BreakerOpen {
		t.Fatal("breaker still closed after 3 failures")
	}
	sent := hook.n.Load()
	for range 50 {
		start := time.Now()
		if a := admit(); !a.Fallback {
			t.Fatal("not decided by the fallback while Redis is down")
		}
		if took := time.Since(start); took > 40*time.Millisecond {
			t.Fatalf("Admit with the breaker open took %s", took)
		}
	}
	if n := hook.n.Load(); n != sent {
		t.Fatalf("%d commands sent to Redis with the breaker open", n-sent)
	}

	clock.Advance(time.Second)
	admit() // the probe fails: cool-down doubles to 2s
	if hook.n.Load() == sent {
		t.Fatal("no probe after the cool-down")
	}
	sent = hook.n.Load()
	clock.Advance(time.Second)
	admit()
	if hook.n.Load() != sent {
		t.Fatal("probed before the doubled cool-down passed")
	}

	srv.silent.Store(false) // Redis is back
	clock.Advance(time.Second)
	if a := admit(); a.Fallback {
		t.Fatalf("probe with Redis back: %+v, want answered by Redis", a)
	}
	if l.Stats().BreakerOpen {
		t.Fatal("breaker still open after a successful probe")
	}
	if a := admit(); a.Fallback || a.Rate.Remaining != 98 {
		t.Fatalf("after recovery: %+v, want Redis counting", a)
	}
}
