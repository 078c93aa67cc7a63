package limits

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// gateHook holds the first script call after arm until open is closed.
type gateHook struct {
	armed   chan struct{}
	entered chan struct{}
	open    chan struct{}
	once    sync.Once
}

func (g *gateHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		select {
		case <-g.armed:
			if runsScript(cmd) {
				g.once.Do(func() {
					close(g.entered)
					<-g.open
				})
			}
		default:
		}
		return next(ctx, cmd)
	}
}

func (g *gateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRedisConcurrentAdmissionsShareARoundTrip: admissions that arrive
// while one is in flight go to Redis together, in one round trip, and
// each gets its own answer.
func TestRedisConcurrentAdmissionsShareARoundTrip(t *testing.T) {
	l, trips := countedRedis(t, runsScript)
	gate := &gateHook{armed: make(chan struct{}), entered: make(chan struct{}), open: make(chan struct{})}
	l.client.AddHook(gate)
	mustHold(t, l, 1000, 1, 1).Release() // the script is loaded
	l.Flush()
	before := trips.n.Load()
	close(gate.armed)

	const queued = 10
	errs := make(chan error, queued+1)
	admit := func() {
		_, err := reserve(l, "k", 1000, 1)
		errs <- err
	}
	go admit()
	<-gate.entered // the first admission is in flight
	for range queued {
		go admit()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.admits.mu.Lock()
		n := len(l.admits.waiting)
		l.admits.mu.Unlock()
		if n == queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d admissions queued behind the one in flight, want %d", n, queued)
		}
		time.Sleep(time.Millisecond)
	}
	close(gate.open)
	for range queued + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := trips.n.Load() - before; n != 2 {
		t.Errorf("%d admissions, %d of them concurrent, took %d round trips; want 2", queued+1, queued, n)
	}
	// Each admission took a hold of its own.
	wantHeld(t, l, queued+1)
}

// TestAdmitQueue: the admissions that queue behind a pipeline go in the
// order they came, at most maxAdmitPipeline at a time, and the queue is
// idle again once none are left.
func TestAdmitQueue(t *testing.T) {
	var q admitQueue
	if q.join(&admitCall{}) {
		t.Fatal("the first admission queued with nothing in flight")
	}
	const queued = maxAdmitPipeline + 72
	calls := make([]*admitCall, queued)
	for i := range calls {
		calls[i] = &admitCall{}
		if !q.join(calls[i]) {
			t.Fatalf("admission %d went with a pipeline in flight", i)
		}
	}
	sent := 0
	for _, want := range []int{maxAdmitPipeline, 72} {
		batch := q.next()
		if len(batch) != want {
			t.Fatalf("a pipeline of %d, want %d", len(batch), want)
		}
		for _, c := range batch {
			if c != calls[sent] {
				t.Fatalf("admission %d sent out of order", sent)
			}
			sent++
		}
	}
	if batch := q.next(); batch != nil {
		t.Fatalf("a pipeline of %d with none queued", len(batch))
	}
	if q.join(&admitCall{}) {
		t.Error("an admission queued though nothing is in flight")
	}
}

// TestAdmitCallStrings: the keys an admission builds in one string are
// those the limiter's other calls (releases, renewals, undoing) build
// one at a time, and its hold's member is its id and the cents wanted.
func TestAdmitCallStrings(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: "p:"})
	rates := []Rate{{}, {Limit: 10, Period: time.Second}, {Limit: 10, Period: time.Second, Rolling: true},
		{Limit: rollingLogMax + 1, Period: time.Second, Rolling: true}}
	rateKey := []func(owner, key string) string{r.gcraKey, r.gcraKey, r.logKey, r.windowKey}
	spends := []KeySpend{{}, {Key: "k1", Period: "2026-11", Limit: 100}}
	for _, owner := range []string{"", "acct"} {
		for i, rate := range rates {
			for _, ks := range spends {
				req := AdmitRequest{Key: "k1", Account: owner, Rate: rate}
				if owner != "" {
					req.Reserve = Reservation{Account: owner, Balance: 100, Want: 12, KeySpend: ks}
				}
				a := r.newAdmitCall(req, owner)
				want := []string{rateKey[i](owner, "k1"), r.leaseKey(owner, "k1")}
				if owner != "" {
					want = append(want, r.balanceKey(owner), r.holdsKey(owner))
				}
				if got := a.keys[:a.nkeys]; !slices.Equal(got, want) {
					t.Errorf("owner %q, rate %+v: keys %q, want %q", owner, rate, got, want)
				}
				id := strings.TrimPrefix(a.id, r.idPrefix)
				if id == a.id || strings.Contains(id, "|") != (owner != "" && ks.limited()) {
					t.Errorf("owner %q, key spend %+v: id %q", owner, ks, a.id)
				}
				if owner != "" && a.member(12) != a.id+"|12" || a.member(5) != a.id+"|5" {
					t.Errorf("id %q: members %q and %q", a.id, a.member(12), a.member(5))
				}
			}
		}
	}
}

// The admissions that queue share a done channel with exactly those
// the same pipeline carries: next takes maxAdmitPipeline at a time.
func TestQueuedAdmissionsShareTheirPipelinesDone(t *testing.T) {
	var q admitQueue
	if q.join(&admitCall{}) {
		t.Fatal("the first admission queued")
	}
	joined := func(n int) {
		for range n {
			if !q.join(&admitCall{}) {
				t.Fatal("an admission did not queue behind the pipeline in flight")
			}
		}
	}
	check := func(want int) {
		t.Helper()
		batch := q.next()
		if len(batch) != want {
			t.Fatalf("a batch of %d, want %d", len(batch), want)
		}
		for _, c := range batch {
			if c.done == nil || c.done != batch[0].done {
				t.Fatal("a batch's admissions do not share one done channel")
			}
		}
		for _, c := range q.waiting {
			if c.done == batch[0].done {
				t.Fatal("an admission left waiting shares the done channel of the batch before it")
			}
		}
	}
	joined(2*maxAdmitPipeline + 5)
	check(maxAdmitPipeline)
	joined(maxAdmitPipeline - 10)
	check(maxAdmitPipeline)
	check(maxAdmitPipeline - 5)
	joined(3)
	check(3)
	if q.next() != nil {
		t.Fatal("a batch from an empty queue")
	}
}

// A batch's done channels are closed once each, however its admissions
// share them and in whatever order: a second close would panic where
// nothing recovers.
func TestCloseDoneClosesEachChannelOnce(t *testing.T) {
	a, b := make(chan struct{}), make(chan struct{})
	batch := []*admitCall{{done: a}, {done: b}, {done: a}, {}, {done: b}}
	closeDone(batch)
	for i, ch := range []chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Errorf("channel %d was left open", i)
		}
	}
}

// TestAdmitNumsAsTheScriptReadsThem: ARGV[1] as Redis reads it with the
// admit script's struct.unpack format is every number the request sends,
// at the offsets admitNums names, and a packed answer reads back as the
// integers the script meant, truncated as Redis truncated them.
func TestAdmitNumsAsTheScriptReadsThem(t *testing.T) {
	c := testRedisClient(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: 45 * time.Second,
		BalanceTTL: 90 * time.Second, Now: func() time.Time { return at }})
	req := AdmitRequest{Key: "k1", Account: "acct", Rate: Rate{Limit: 7, Burst: 3, Period: 1500 * time.Millisecond},
		StreamLimit: 5, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 1 << 50, Want: 12, Min: 4,
			KeySpend: KeySpend{Key: "k1", Period: "2026-11", Limit: 1<<53 - 1, Spent: 99}}}
	call := r.newAdmitCall(req, "acct")
	got, err := c.Eval(ctx, `local v = {struct.unpack(ARGV[1], ARGV[2])}
for i = 1, #v - 1 do v[i] = string.format("%.17g", v[i]) end
v[#v] = nil
return v`, nil, admitNumsFormat, call.argv[3+call.nkeys]).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	now, _ := strconv.ParseFloat(r.nowArg(), 64)
	want := []float64{1, 1, now, 7, 1.5, 3, 5, 45, 12, 4, 90, 1<<53 - 1, 99}
	if len(got) != len(want) {
		t.Fatalf("unpacked %d numbers, want %d: %q", len(got), len(want), got)
	}
	for i, g := range got {
		if f, _ := strconv.ParseFloat(g, 64); f != want[i] {
			t.Errorf("number %d: %s, want %v", i+1, g, want[i])
		}
	}

	packed, err := c.Eval(ctx, `return struct.pack("<dddddddd", 1, 2, 3, 4.5, 1e6 + 0.5, -1, -2.7, 2^53 - 1)`, nil).Text()
	if err != nil {
		t.Fatal(err)
	}
	var reply [admitReplyLen]int64
	if err := readAdmitReply(&reply, packed); err != nil {
		t.Fatal(err)
	}
	if reply != [admitReplyLen]int64{1, 2, 3, 4, 1000000, -1, -2, 1<<53 - 1} {
		t.Errorf("answer read as %v", reply)
	}
	if err := readAdmitReply(&reply, packed[1:]); err == nil {
		t.Error("a short answer read without an error")
	}
}

// TestAdmitByEval: an admission sent as an EVAL, as it is to a Redis that
// does not have the script (NOSCRIPT), is read as one sent by its SHA1.
func TestAdmitByEval(t *testing.T) {
	c := testRedisClient(t)
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c)})
	req := AdmitRequest{Key: "k1", Account: "acct", Rate: Rate{Limit: 5, Period: time.Minute, Rolling: true},
		StreamLimit: 2, WantLease: true, Reserve: Reservation{Account: "acct", Balance: 100, Want: 30, Min: 10}}
	call := r.newAdmitCall(req, "acct")
	call.eval(context.Background(), c)
	if call.err != nil {
		t.Fatal(call.err)
	}
	// Admitted, a slot taken, 4 left of the rate, 30 cents held.
	if want := []int64{1, 1, 4, 0, 60000000, 30, 0, 0}; !slices.Equal(call.reply, want) {
		t.Errorf("answer %v, want %v", call.reply, want)
	}
}

// TestRedisAdmitCallsReusedUnderLoad: admissions whose calls are given
// back and taken again at once, by callers that queue, send their own,
// are handed over or stop waiting, each get their own answer, and what
// those that stopped waiting took is undone. Run with -race: a call
// written by its next admission while the sender of its last still
// reads it is what this is for.
func TestRedisAdmitCallsReusedUnderLoad(t *testing.T) {
	for _, sendsOwn := range []bool{true, false} {
		t.Run(map[bool]string{true: "sends-own", false: "handed-over"}[sendsOwn], func(t *testing.T) {
			c := testRedisClient(t)
			l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c)})
			l.sendsOwn = sendsOwn
			const clients, each = 24, 150
			var wg sync.WaitGroup
			for g := range clients {
				wg.Go(func() {
					key, acct := "k"+strconv.Itoa(g), "acct"+strconv.Itoa(g)
					for i := range each {
						want := int64(g*1000 + i%97 + 1)
						req := AdmitRequest{Key: key, Account: acct, StreamLimit: 1000, WantLease: true,
							Rate:    Rate{Limit: 1_000_000 + g, Period: time.Minute},
							Reserve: Reservation{Account: acct, Balance: 1 << 40, Want: want, Min: 1}}
						ctx, cancel := context.Background(), context.CancelFunc(func() {})
						if i%4 == 3 { // some stop waiting while their call is queued or in flight
							ctx, cancel = context.WithTimeout(ctx, time.Duration(i%7)*20*time.Microsecond)
						}
						a, err := l.Admit(ctx, req)
						cancel()
						if err != nil {
							if ctx.Err() == nil {
								t.Errorf("admission %d of %s: %v", i, key, err)
							}
							continue
						}
						if a.Fallback || a.Hold.Cents() != want || a.Hold.Account() != acct ||
							a.Lease.Key() != key || a.Rate.Limit != req.Rate.Limit {
							t.Errorf("admission %d of %s: fallback %t, held %d of %s, lease of %s, limit %d; want Redis's, %d of %s, %s, %d",
								i, key, a.Fallback, a.Hold.Cents(), a.Hold.Account(), a.Lease.Key(), a.Rate.Limit,
								want, acct, key, req.Rate.Limit)
						}
						a.Hold.Release()
						a.Lease.Release()
					}
				})
			}
			wg.Wait()
			l.Flush()
			ctx := context.Background()
			for g := range clients {
				acct := "acct" + strconv.Itoa(g)
				leases := l.leaseKey(acct, "k"+strconv.Itoa(g))
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					held, err := l.Held(ctx, acct)
					n, zerr := c.ZCard(ctx, leases).Result()
					if err == nil && zerr == nil && held == 0 && n == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: %d cents held (%v), %d slots (%v) after every admission was released or undone",
							acct, held, err, n, zerr)
					}
					l.Flush()
				}
			}
		})
	}
}
