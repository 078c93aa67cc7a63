package limits

import (
	"context"
	"errors"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const localShards = 64

// LocalConfig configures an in-process limiter.
type LocalConfig struct {
	// Now is the clock. Default (nil): time.Now. Tests inject a fake clock
	// instead of sleeping.
	Now func() time.Time
	// SweepEvery is how often each shard drops the entries of idle keys
	// (GCRA back to a full budget, rolling window empty, no lease held).
	// Memory is bounded by the keys active within about one Period plus
	// SweepEvery. Default (0): one minute.
	SweepEvery time.Duration
	// HoldTTL is how long a reservation's Hold outlives its last renewal.
	// Holders are in this process: a hold is renewed when found past its
	// expiry while still held, with no goroutine per hold. Default (0):
	// 30s.
	HoldTTL time.Duration
	// BalanceTTL is how long an account's mirrored balance is trusted
	// before it is seeded again from the ledger balance of the next
	// request. Default (0): one minute.
	BalanceTTL time.Duration
}

// Local is the in-process Limiter: the default for one node, and the
// fallback of Redis. State lives in a map split into shards, each behind
// its own mutex, so that unrelated keys rarely contend. Rate and lease
// state of a key share one entry, which makes Admit atomic under one lock.
type Local struct {
	now        func() time.Time // nil: the system's clock (nanos)
	base       time.Time
	sweepEvery int64
	seed       maphash.Seed
	leaseSeq   atomic.Uint64
	shards     [localShards]localShard

	holdTTL       int64
	balanceTTL    int64
	accountShards [localShards]localAccountShard
}

type localShard struct {
	mu        sync.Mutex
	entries   map[string]*localEntry
	lastSweep int64
}

type localEntry struct {
	rate   rateState
	leases int
}

// NewLocal returns an in-process limiter.
func NewLocal(cfg LocalConfig) *Local {
	base := time.Now()
	if cfg.Now != nil {
		base = cfg.Now()
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = time.Minute
	}
	if cfg.HoldTTL <= 0 {
		cfg.HoldTTL = 30 * time.Second
	}
	if cfg.BalanceTTL <= 0 {
		cfg.BalanceTTL = time.Minute
	}
	l := &Local{
		now: cfg.Now, base: base, sweepEvery: int64(cfg.SweepEvery), seed: maphash.MakeSeed(),
		holdTTL: int64(cfg.HoldTTL), balanceTTL: int64(cfg.BalanceTTL),
	}
	for i := range l.shards {
		l.shards[i].entries = make(map[string]*localEntry)
		l.accountShards[i].accounts = make(map[string]*localAccount)
	}
	return l
}

// nanos is now on the limiter's time line. Subtracting a base taken from
// the same clock keeps time.Now's monotonic reading, so wall-clock jumps
// do not move limits. On the system's clock time.Since reads that
// monotonic clock alone, where time.Now reads the wall clock too: an
// admission and its settlement read it three times.
func (l *Local) nanos() int64 {
	if l.now == nil {
		return int64(time.Since(l.base))
	}
	return int64(l.now().Sub(l.base))
}

func (l *Local) shard(key string) *localShard {
	return &l.shards[maphash.String(l.seed, key)%localShards]
}

// entry returns key's entry, creating it. The shard is locked.
func (l *Local) entry(sh *localShard, key string, now int64) *localEntry {
	if now-sh.lastSweep >= l.sweepEvery {
		sh.sweep(now)
	}
	e := sh.entries[key]
	if e == nil {
		e = &localEntry{}
		sh.entries[key] = e
	}
	return e
}

// sweep drops the entries of idle keys. The shard is locked.
func (sh *localShard) sweep(now int64) {
	sh.lastSweep = now
	for k, e := range sh.entries {
		if e.leases == 0 && e.rate.idle(now) {
			delete(sh.entries, k)
		}
	}
}

// Len is the number of keys with state held, for tests and metrics.
func (l *Local) Len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// Allow implements RateLimiter.
func (l *Local) Allow(ctx context.Context, key string, r Rate) (RateResult, error) {
	a, err := l.Admit(ctx, AdmitRequest{Key: key, Rate: r})
	if _, refused := errors.AsType[*LimitError](err); refused {
		err = nil
	}
	return a.Rate, err
}

// Acquire implements Leaser.
func (l *Local) Acquire(ctx context.Context, key string, limit int) (*Lease, error) {
	return acquireByAdmit(ctx, l, key, limit)
}

// Admit implements Admitter under the key's shard lock and, with a
// reservation, the account's shard lock, taken first.
func (l *Local) Admit(ctx context.Context, req AdmitRequest) (Admission, error) {
	if err := ctx.Err(); err != nil {
		return Admission{}, err
	}
	now := l.nanos()
	var acct *localAccount
	var hold int64
	if req.Reserve.wanted() {
		ash := l.accountShard(req.Reserve.Account)
		ash.mu.Lock()
		defer ash.mu.Unlock()
		acct = l.account(ash, req.Reserve.Account, now)
		avail := acct.available(now, l.balanceTTL, l.holdTTL, req.Reserve)
		if avail < req.Reserve.min() {
			return Admission{}, &BalanceError{Available: avail, Min: req.Reserve.min()}
		}
		hold = min(req.Reserve.want(), avail)
		if err := acct.checkKeySpend(req.Reserve); err != nil {
			return Admission{}, err
		}
	}
	sh := l.shard(req.Key)
	sh.mu.Lock()
	e := l.entry(sh, req.Key, now)
	d := e.rate.decide(now, req.Rate)
	if !d.res.Allowed {
		sh.mu.Unlock()
		return Admission{Rate: d.res}, newRateError(req.Rate, d.res)
	}
	if req.wantsLease() && e.leases >= req.StreamLimit {
		res := e.rate.uncounted(now, req.Rate, d)
		sh.mu.Unlock()
		return Admission{Rate: res}, newStreamError(req.StreamLimit)
	}
	e.rate.commit(now, req.Rate, d)
	if req.wantsLease() {
		e.leases++
	}
	sh.mu.Unlock()

	adm := Admission{Rate: d.res}
	if req.wantsLease() {
		var b [32]byte
		id := strconv.AppendUint(append(b[:0], "local-"...), l.leaseSeq.Add(1), 10)
		adm.Lease = new(Lease)
		adm.Lease.init(req.Key, string(id), l)
		adm.Lease.tie(ctx)
	}
	if req.Reserve.holds() {
		// The hold is known by the Hold handed out, without an id.
		adm.Hold = &Hold{account: req.Reserve.Account, cents: hold, settler: l}
		lh := localHold{cents: hold, expiry: now + l.holdTTL}
		if req.Reserve.KeySpend.limited() {
			lh.key = req.Reserve.KeySpend.Key
		}
		acct.addHold(adm.Hold, lh)
	}
	return adm, nil
}

// Precheck implements Prechecker. In process everything is known, so it
// is exact when it answers: the ledger balance and the available balance
// (the mirror less the holds) against the minimum, then the key's rate,
// decided as Admit would and not counted.
func (l *Local) Precheck(req AdmitRequest) (Admission, error) {
	if err := ledgerShort(req.Reserve); err != nil {
		return Admission{}, err
	}
	now := l.nanos()
	if req.Reserve.wanted() {
		ash := l.accountShard(req.Reserve.Account)
		ash.mu.Lock()
		acct := l.account(ash, req.Reserve.Account, now)
		avail := acct.available(now, l.balanceTTL, l.holdTTL, req.Reserve)
		spendErr := acct.checkKeySpend(req.Reserve)
		ash.mu.Unlock()
		if avail < req.Reserve.min() {
			return Admission{}, &BalanceError{Available: avail, Min: req.Reserve.min()}
		}
		if spendErr != nil {
			return Admission{}, spendErr
		}
	}
	if !req.Rate.Enabled() {
		return Admission{}, nil
	}
	sh := l.shard(req.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entries[req.Key]
	if e == nil {
		return Admission{}, nil // nothing counted: a full budget
	}
	if d := e.rate.decide(now, req.Rate); !d.res.Allowed {
		return Admission{Rate: d.res}, newRateError(req.Rate, d.res)
	}
	return Admission{}, nil
}

// releaseLease implements leaseReleaser.
func (l *Local) releaseLease(lease *Lease) { l.release(lease.key) }

func (l *Local) release(key string) {
	sh := l.shard(key)
	sh.mu.Lock()
	// An entry with leases is never swept, so it is still there.
	if e := sh.entries[key]; e != nil && e.leases > 0 {
		e.leases--
	}
	sh.mu.Unlock()
}

// Interface guards.
var _ Limiter = (*Local)(nil)
