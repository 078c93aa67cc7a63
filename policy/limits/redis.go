package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// FailurePolicy says what a limit does when Redis cannot answer.
type FailurePolicy int

const (
	// FailOpen decides with the in-process fallback limiter instead, so
	// that an outage of the shared store does not stop the API. The zero
	// value.
	FailOpen FailurePolicy = iota
	// FailClosed refuses the request with an *UnavailableError (503).
	FailClosed
)

// RedisConfig configures the Redis limiter.
type RedisConfig struct {
	// Client is the Redis client; required. Create it with
	// ContextTimeoutEnabled: true so that it gives up at Timeout itself;
	// without it the limiter still returns at Timeout, but the command
	// lingers in the background until the client's ReadTimeout.
	Client redis.UniversalClient
	// Prefix starts every key this limiter writes, so that limiters of
	// different deployments or tests can share a Redis. GCRA keys, written
	// through redis_rate, get "rate:" in front of it. Default (""):
	// "switchyard:limits:".
	Prefix string
	// Timeout bounds every Redis call. Default (0): 150ms.
	Timeout time.Duration
	// LeaseTTL is how long a lease outlives its last renewal, and up to
	// a second more: its expiry is kept in whole seconds, rounded up
	// (redis_scripts.go). Holders renew every LeaseTTL/3, so a holder
	// that dies without releasing (SIGKILL, lost network) frees its slots
	// within LeaseTTL and a second. Default (0): 30s.
	LeaseTTL time.Duration
	// BalanceTTL is how long an account's mirrored balance lives in Redis
	// after it was seeded from a ledger balance; then the next request of
	// the account seeds it again. Holds of reservations live LeaseTTL
	// after their last renewal, like leases. Default (0): one minute.
	BalanceTTL time.Duration
	// RatePolicy is what rate checks do when Redis fails. Default (0):
	// FailOpen.
	RatePolicy FailurePolicy
	// StreamPolicy is what concurrency leases do when Redis fails.
	// Default (0): FailOpen.
	StreamPolicy FailurePolicy
	// Fallback is the in-process limiter used by FailOpen. Default (nil):
	// a new Local using Now.
	Fallback *Local
	// FallbackNodes divides the limits the fallback enforces (rounding up,
	// at least 1), so that N nodes failing open together admit about what
	// one shared limit would, not N times as much. Set it to the number of
	// gateway nodes. Default (0): 1, each node enforces the full limits.
	FallbackNodes int
	// Breaker configures the circuit breaker in front of Redis.
	Breaker BreakerConfig
	// Logger receives warnings about Redis failures and the breaker.
	// Default (nil): no logging.
	Logger *zap.Logger
	// Now is the clock. Default (nil): the scripts read the Redis server's
	// clock, so that all nodes agree on time, and the breaker uses
	// time.Now. Tests inject a fake clock; GCRA checks through Allow then
	// use the admit script instead of redis_rate, which cannot take one.
	Now func() time.Time
}

// Redis is the Limiter shared by many gateway nodes. It needs Redis 5 or
// later (scripts replicated by effects). Every hot-path check is one
// script in one round trip.
type Redis struct {
	client       redis.UniversalClient
	rate         *redis_rate.Limiter
	prefix       string
	timeout      time.Duration
	leaseTTL     time.Duration
	balanceTTL   time.Duration
	ratePolicy   FailurePolicy
	streamPolicy FailurePolicy
	fallback     *Local
	nodes        int
	breaker      *breaker
	log          *zap.Logger
	now          func() time.Time

	idPrefix string
	idSeq    atomic.Uint64

	failures  atomic.Uint64
	fallbacks atomic.Uint64
	refusals  atomic.Uint64
	retries   atomic.Uint64 // releases tried again

	spent    spentRates // keys whose rate this node knows spent, for Precheck
	releases releases   // slots and holds to free, gathered
	admits   admitQueue // admissions waiting for the pipeline in flight
	// loneDone ends the contexts of admissions sent alone (sendLone) and
	// of their pipelines (admitQueue.ctx).
	loneDone deadlineChans
	// sendsOwn: an admission that finds no pipeline in flight is sent
	// by its caller (Redis.sendOwn), the client ending it at the
	// timeout.
	sendsOwn bool
	renewals renewals // leases and holds to keep alive

	onRenew    func(kept bool) // test hook
	renewEvery time.Duration   // tests: the renewals' tick; else LeaseTTL/3
}

// NewRedis returns a Redis limiter.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	if cfg.Client == nil {
		return nil, errors.New("limits: RedisConfig.Client is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "switchyard:limits:"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 150 * time.Millisecond
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 30 * time.Second
	}
	if cfg.BalanceTTL <= 0 {
		cfg.BalanceTTL = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Fallback == nil {
		cfg.Fallback = NewLocal(LocalConfig{Now: cfg.Now, HoldTTL: cfg.LeaseTTL, BalanceTTL: cfg.BalanceTTL})
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("limits: lease id prefix: %v", err)
	}
	r := &Redis{
		client:       cfg.Client,
		rate:         redis_rate.NewLimiter(cfg.Client),
		prefix:       cfg.Prefix,
		timeout:      cfg.Timeout,
		leaseTTL:     cfg.LeaseTTL,
		balanceTTL:   cfg.BalanceTTL,
		ratePolicy:   cfg.RatePolicy,
		streamPolicy: cfg.StreamPolicy,
		fallback:     cfg.Fallback,
		nodes:        max(cfg.FallbackNodes, 1),
		log:          cfg.Logger,
		now:          cfg.Now,
		idPrefix:     hex.EncodeToString(b[:]) + "-",
	}
	clock := cfg.Now
	if clock == nil {
		clock = time.Now
	}
	r.breaker = newBreaker(cfg.Breaker, clock, r.breakerChanged)
	r.releases.r, r.releases.gather = r, releaseGather
	r.admits.idle = make(chan *admitCall)
	r.sendsOwn = endsAtDeadline(cfg.Client)
	r.renewals.r = r
	return r, nil
}

// RedisStats are counters for metrics.
type RedisStats struct {
	Failures    uint64 // Redis calls that failed or timed out
	Fallbacks   uint64 // checks decided by the in-process fallback
	Unavailable uint64 // checks refused by FailClosed
	Retries     uint64 // releases tried again after Redis did not confirm them
	BreakerOpen bool   // Redis calls are being skipped right now
}

// Stats returns the limiter's counters.
func (r *Redis) Stats() RedisStats {
	return RedisStats{
		Failures:    r.failures.Load(),
		Fallbacks:   r.fallbacks.Load(),
		Unavailable: r.refusals.Load(),
		Retries:     r.retries.Load(),
		BreakerOpen: r.breaker.isOpen(),
	}
}

// Keys. A script may touch only keys of one Redis Cluster slot, and the
// hash tag, the first {...} of a key, decides its slot. An API key
// belongs to one account, so all of a key's state (its rate, its stream
// slots) lives under its account's tag, beside the account's balance and
// holds: an admission, rate, slot and hold together, touches one slot,
// and the accounts spread over the cluster's primaries. A key admitted
// with no account (the admission queue's, failed authentications') has a
// tag of its own.
func (r *Redis) keyBase(account, key string) string {
	if account == "" {
		return r.prefix + "{" + key + "}"
	}
	return r.accountTagged(account) + ":key:" + key
}

// gcraKey is where redis_rate, and the admit script like it, keep a GCRA
// rate: redis_rate puts "rate:" in front of the key it is given.
// Each key is built in one concatenation, one allocation: every
// admission builds four.
func (r *Redis) gcraKey(account, key string) string {
	if account == "" {
		return "rate:" + r.prefix + "{" + key + "}"
	}
	return "rate:" + r.prefix + "{acct:" + account + "}:key:" + key
}
func (r *Redis) windowKey(account, key string) string { return r.keyWith(account, key, ":window") }
func (r *Redis) logKey(account, key string) string    { return r.keyWith(account, key, ":log") }

// rollingLogMax is the largest limit whose rolling window is kept as a
// log of 8-byte times in one string rather than a sorted set (logLua in
// redis_scripts.go): the spec's 60 and 150 are.
const rollingLogMax = 256

func (r *Redis) leaseKey(account, key string) string { return r.keyWith(account, key, ":streams") }

// keyWith is keyBase(account, key) + suffix.
func (r *Redis) keyWith(account, key, suffix string) string {
	if account == "" {
		return r.prefix + "{" + key + "}" + suffix
	}
	return r.prefix + "{acct:" + account + "}:key:" + key + suffix
}

// An account's reservation state carries the account's own hash tag.
func (r *Redis) accountTagged(account string) string { return r.prefix + "{acct:" + account + "}" }
func (r *Redis) balanceKey(account string) string    { return r.prefix + "{acct:" + account + "}:balance" }
func (r *Redis) holdsKey(account string) string      { return r.prefix + "{acct:" + account + "}:holds" }

// appendID appends a new admission's id, unique among the nodes'; with
// named, followed by "|k:" and key.
func (r *Redis) appendID(b []byte, named bool, key string) []byte {
	b = strconv.AppendUint(append(b, r.idPrefix...), r.idSeq.Add(1), 36)
	if named {
		b = append(append(b, "|k:"...), key...)
	}
	return b
}

// appendKeyBase appends keyBase(account, key), and appendAccountTag
// accountTagged(account): for keys built in one buffer.
func (r *Redis) appendKeyBase(b []byte, account, key string) []byte {
	if account == "" {
		return append(append(append(append(b, r.prefix...), '{'), key...), '}')
	}
	return append(append(r.appendAccountTag(b, account), ":key:"...), key...)
}

func (r *Redis) appendAccountTag(b []byte, account string) []byte {
	return append(append(append(append(b, r.prefix...), "{acct:"...), account...), '}')
}

// epoch2017 is redis_rate's epoch; see redis_scripts.go.
var epoch2017 = time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)

// nowArg is the scripts' "now" argument: empty for the server's clock.
func (r *Redis) nowArg() string {
	if r.now == nil {
		return ""
	}
	return strconv.FormatFloat(r.now().Sub(epoch2017).Seconds(), 'f', 6, 64)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// micros is a duration the admit script answered in microseconds. The
// scripts' times are whole microseconds, and the script rounds to one,
// which undoes the float error: a retry of exactly 1s is not 1.0000001s,
// sent as Retry-After: 2.
func micros(us int64) time.Duration { return max(time.Duration(us)*time.Microsecond, 0) }

var errBreakerOpen = errors.New("redis circuit breaker open")

// Names of the Redis limiter's goroutines, as internal/guard counts their
// panics.
var (
	redisCallGoroutine    = guard.Name("redis_call")
	redisAdmitGoroutine   = guard.Name("redis_admit")
	redisReleaseGoroutine = guard.Name("redis_release")
	redisRenewGoroutine   = guard.Name("redis_renew")
	leaseGoroutine        = guard.Name("lease_release")
)

// call runs fn against Redis within the timeout, through the breaker. It
// returns at the timeout even if the client does not honour contexts.
// When ctx itself ends, the result is ctx's error and says nothing about
// Redis.
func (r *Redis) call(ctx context.Context, op string, fn func(context.Context) error) error {
	ok, probe := r.breaker.allow()
	if !ok {
		return errBreakerOpen
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		// A panic in the client (or in fn) is a failed call, for the
		// breaker and the failure policies, not the end of the process.
		var err error
		if perr := guard.Run(redisCallGoroutine, func() { err = fn(cctx) }); perr != nil {
			err = perr
		}
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-cctx.Done():
		select {
		case err = <-errc: // it made it after all
		default:
			err = fmt.Errorf("%w after %s", cctx.Err(), r.timeout)
		}
	}
	return r.called(ctx, op, probe, err)
}

// called counts the outcome err of a call made with ctx that the breaker
// allowed (probe: as its probe), and returns the call's error: ctx's own
// when ctx ended.
func (r *Redis) called(ctx context.Context, op string, probe bool, err error) error {
	switch {
	case err == nil:
		r.breaker.done(probe, succeeded)
	case ctx.Err() != nil:
		r.breaker.done(probe, neutral)
		return ctx.Err()
	default:
		r.failures.Add(1)
		r.log.Warn("redis limiter call failed", zap.String("op", op), zap.Error(err))
		r.breaker.done(probe, failed)
		r.relearnSlots()
	}
	return err
}

// relearnSlots has a Redis Cluster client ask the cluster again which
// primary serves which slot. A primary that crashed answers no MOVED
// that would teach the client its successor, and go-redis otherwise
// asks only once a minute: until then every admission of the accounts
// it served would fail, long after a replica took over. go-redis
// gathers these into at most one question per 200ms.
func (r *Redis) relearnSlots() {
	if c, ok := r.client.(*redis.ClusterClient); ok {
		c.ReloadState(context.Background())
	}
}

func (r *Redis) breakerChanged(open bool, coolDown time.Duration) {
	if open {
		r.log.Warn("redis limiter circuit open: using failure policies without calling redis",
			zap.Duration("cool_down", coolDown))
		return
	}
	r.log.Info("redis limiter circuit closed: redis answers again")
}

// Allow implements RateLimiter. GCRA goes through redis_rate; a rolling
// window, or any rate under an injected clock, through the admit script.
func (r *Redis) Allow(ctx context.Context, key string, rate Rate) (RateResult, error) {
	if err := ctx.Err(); err != nil {
		return RateResult{}, err
	}
	if !rate.Enabled() {
		return RateResult{Allowed: true}, nil
	}
	if rate.Rolling || r.now != nil {
		a, err := r.Admit(ctx, AdmitRequest{Key: key, Rate: rate})
		if _, refused := errors.AsType[*LimitError](err); refused {
			err = nil
		}
		return a.Rate, err
	}
	var res *redis_rate.Result
	err := r.call(ctx, "allow", func(ctx context.Context) error {
		var err error
		res, err = r.rate.Allow(ctx, r.keyBase("", key), redis_rate.Limit{Rate: rate.Limit, Burst: rate.burst(), Period: rate.Period})
		return err
	})
	if err == nil {
		return RateResult{
			Allowed:    res.Allowed > 0,
			Limit:      rate.Limit,
			Remaining:  res.Remaining,
			RetryAfter: max(res.RetryAfter, 0),
			ResetAfter: max(res.ResetAfter, 0),
		}, nil
	}
	if ctx.Err() != nil {
		return RateResult{}, ctx.Err()
	}
	if r.ratePolicy == FailClosed {
		r.refusals.Add(1)
		return RateResult{}, &UnavailableError{Limit: LimitRequests, Err: err}
	}
	r.fallbacks.Add(1)
	return r.fallback.Allow(ctx, key, r.scaleRate(rate))
}

// Acquire implements Leaser.
func (r *Redis) Acquire(ctx context.Context, key string, limit int) (*Lease, error) {
	return acquireByAdmit(ctx, r, key, limit)
}

// Admit implements Admitter with one run of admitScript.
func (r *Redis) Admit(ctx context.Context, req AdmitRequest) (Admission, error) {
	if err := ctx.Err(); err != nil {
		return Admission{}, err
	}
	owner, err := req.owner()
	if err != nil {
		return Admission{}, err
	}
	c := r.newAdmitCall(req, owner)
	sent := r.clock()
	if err = r.runAdmit(ctx, c); err == nil {
		adm, err := r.admission(ctx, c, sent)
		freeAdmitCall(c)
		return adm, err
	}
	if ctx.Err() != nil {
		return Admission{}, ctx.Err()
	}
	return r.fail(ctx, req, err)
}

// undoAdmit frees what the admission id of req took, or may have taken,
// when nobody will use it. From the script's reply it frees what was
// taken; without one (the answer was lost) whatever may have been: the
// slot by its id, and the hold by its id whatever its amount. The release
// goes with the others (releases), tried until Redis confirms it.
func (r *Redis) undoAdmit(req AdmitRequest, id string, reply []int64) {
	var rel release
	lease := req.wantsLease()
	switch {
	case len(reply) == admitReplyLen:
		allowed, taken, cents := reply[0], reply[1], reply[5]
		lease = allowed == 1 && taken == 1
		if allowed == 1 && cents > 0 {
			acct := req.Reserve.Account
			rel.hold = &settlement{balanceKey: r.balanceKey(acct), holdsKey: r.holdsKey(acct),
				member: id + "|" + strconv.FormatInt(cents, 10)}
		}
	case req.Reserve.holds():
		acct := req.Reserve.Account
		rel.hold = &settlement{balanceKey: r.balanceKey(acct), holdsKey: r.holdsKey(acct),
			member: id, byID: true}
	}
	if lease {
		owner, _ := req.owner() // Admit checked it
		rel.leaseKey, rel.leaseID = r.leaseKey(owner, req.Key), id
	}
	if rel.leaseKey != "" || rel.hold != nil {
		r.releases.add(rel)
	}
}

// admission reads the admit script's reply to c, sent at sent, and
// remembers a rate it shows spent (spentRates).
func (r *Redis) admission(ctx context.Context, c *admitCall, sent time.Time) (Admission, error) {
	req, reply := &c.req, c.reply
	if len(reply) != admitReplyLen {
		return Admission{}, fmt.Errorf("limits: admit script returned %d values", len(reply))
	}
	hold := reply[5]
	switch {
	case hold == -2:
		spent, held := reply[6], reply[7]
		ks := req.Reserve.KeySpend
		return Admission{}, &SpendLimitError{Limit: ks.Limit, Spent: spent, Held: held, Want: max(req.Reserve.want(), req.Reserve.min())}
	case hold < 0:
		return Admission{}, &BalanceError{Available: reply[6], Min: req.Reserve.min()}
	}
	allowed, lease, remaining := reply[0], reply[1], reply[2]
	retryAfter, resetAfter := micros(reply[3]), micros(reply[4])
	var res RateResult
	if req.Rate.Enabled() {
		res = RateResult{
			Allowed:    allowed == 1,
			Limit:      req.Rate.Limit,
			Remaining:  int(remaining),
			ResetAfter: resetAfter,
		}
	} else {
		res.Allowed = allowed == 1
	}
	switch {
	case lease == 2:
		return Admission{Rate: res}, newStreamError(req.StreamLimit)
	case allowed != 1:
		res.RetryAfter = retryAfter
		r.spent.spend(req.Key, req.Rate, sent, retryAfter, resetAfter)
		return Admission{Rate: res}, newRateError(req.Rate, res)
	case req.Rate.Enabled() && remaining == 0:
		// Admitted, and the next is not until retryAfter.
		r.spent.spend(req.Key, req.Rate, sent, retryAfter, resetAfter)
	}
	adm := Admission{Rate: res}
	var end *streamEnd // a stream's hold and lease end together
	if lease == 1 {
		adm.Lease, end = r.startLease(ctx, req.Key, c.keys[1], c.id, req.Reserve.holds())
	}
	if req.Reserve.holds() {
		adm.Hold = r.startHold(req.Reserve.Account, c.id, c.keys[2], c.keys[3], c.member(hold), hold, end)
	}
	return adm, nil
}

// fail applies the failure policies to a request Redis could not check.
func (r *Redis) fail(ctx context.Context, req AdmitRequest, cause error) (Admission, error) {
	if req.Rate.Enabled() && r.ratePolicy == FailClosed {
		r.refusals.Add(1)
		return Admission{}, &UnavailableError{Limit: LimitRequests, Err: cause}
	}
	if req.wantsLease() && r.streamPolicy == FailClosed {
		r.refusals.Add(1)
		return Admission{}, &UnavailableError{Limit: LimitStreams, Err: cause}
	}
	r.fallbacks.Add(1)
	if ce := r.log.Check(zap.DebugLevel, "redis limiter fell back to in-process limits"); ce != nil {
		ce.Write(zap.String("key", req.Key), zap.Error(cause))
	}
	req.Rate = r.scaleRate(req.Rate)
	req.StreamLimit = r.scale(req.StreamLimit)
	a, err := r.fallback.Admit(ctx, req)
	a.Fallback = true
	return a, err
}

func (r *Redis) scale(n int) int {
	if n <= 0 || r.nodes <= 1 {
		return n
	}
	return max((n+r.nodes-1)/r.nodes, 1)
}

func (r *Redis) scaleRate(rate Rate) Rate {
	rate.Limit = r.scale(rate.Limit)
	rate.Burst = r.scale(rate.Burst)
	return rate
}

// Interface guards.
var _ Limiter = (*Redis)(nil)

// Held sums the account's unexpired holds, those of every node.
func (r *Redis) Held(ctx context.Context, account string) (int64, error) {
	var held int64
	err := r.call(ctx, "held", func(ctx context.Context) error {
		var err error
		held, err = heldScript.Run(ctx, r.client, []string{r.holdsKey(account)}, r.nowArg()).Int64()
		return err
	})
	return held, err
}
