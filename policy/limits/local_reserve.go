package limits

import (
	"context"
	"hash/maphash"
	"sync"
)

// localAccounts keeps the per-account reservation state of a Local: the
// mirrored balance and the holds in flight. Its shards are separate from
// the key shards and are always locked before them.
type localAccountShard struct {
	mu        sync.Mutex
	accounts  map[string]*localAccount
	lastSweep int64
}

type localAccount struct {
	mirrored     bool
	balance      int64 // ledger balance, less the charges settled since
	base         int64 // the ledger balance the mirror last took in
	mirrorExpiry int64
	held         int64
	// holds are the holds in flight by the Hold handed out for each: its
	// holder is in this process, so the pointer names it, and a hold
	// needs no id of its own.
	holds map[*Hold]localHold
	// nextExpiry is at or before the earliest expiry of holds: until then
	// no hold can have expired, and admissions skip looking, which would
	// cost them every hold in flight (a loaded account has hundreds,
	// waiting for their batch's commit).
	nextExpiry int64
	// keys are the spend of the account's keys that have a spend limit.
	keys map[string]*localKeySpend
}

// localKeySpend is a key's spend in its period and the holds of its
// requests in flight.
type localKeySpend struct {
	period      string
	spent, held int64
}

// keySpend brings the key's spend up to date with what ks carries and
// returns it: a new period starts from ks.Spent; within one, the store's
// spend, which only grows, is taken when it is the larger (charges of
// another process, or the mirror's loss).
func (a *localAccount) keySpend(ks KeySpend) *localKeySpend {
	if a.keys == nil {
		a.keys = make(map[string]*localKeySpend)
	}
	k := a.keys[ks.Key]
	switch {
	case k == nil:
		k = &localKeySpend{period: ks.Period, spent: ks.Spent}
		a.keys[ks.Key] = k
	case k.period != ks.Period:
		// The holds in flight stay: their charges count in the new
		// period, which can only refuse sooner.
		k.period, k.spent = ks.Period, ks.Spent
	default:
		k.spent = max(k.spent, ks.Spent)
	}
	return k
}

// checkKeySpend refuses a reservation whose whole estimate (for a check,
// its minimum) does not fit under its key's spend limit beside the key's
// spend and holds in flight.
func (a *localAccount) checkKeySpend(r Reservation) error {
	ks := r.KeySpend
	if !ks.limited() {
		return nil
	}
	k := a.keySpend(ks)
	if need := max(r.want(), r.min()); k.spent+k.held+need > ks.Limit {
		return &SpendLimitError{Limit: ks.Limit, Spent: k.spent, Held: k.held, Want: need}
	}
	return nil
}

// dropHold removes a hold and takes it off its key's holds.
func (a *localAccount) dropHold(holder *Hold, h localHold) {
	a.held -= h.cents
	delete(a.holds, holder)
	if h.key != "" {
		if k := a.keys[h.key]; k != nil {
			k.held -= h.cents
		}
	}
}

// addHold adds the hold handed out as holder.
func (a *localAccount) addHold(holder *Hold, h localHold) {
	a.holds[holder] = h
	a.held += h.cents
	if h.key != "" {
		a.keys[h.key].held += h.cents // keySpend made it
	}
	if len(a.holds) == 1 || h.expiry < a.nextExpiry {
		a.nextExpiry = h.expiry
	}
}

type localHold struct {
	cents, expiry int64
	// key is the key whose spend limit the hold counts against; "" for
	// none.
	key string
}

func (l *Local) accountShard(account string) *localAccountShard {
	return &l.accountShards[maphash.String(l.seed, account)%localShards]
}

// account returns the account's state, creating it. The shard is locked.
func (l *Local) account(sh *localAccountShard, id string, now int64) *localAccount {
	if now-sh.lastSweep >= l.sweepEvery {
		sh.lastSweep = now
		for k, a := range sh.accounts {
			a.expire(now, l.holdTTL)
			if len(a.holds) == 0 && now >= a.mirrorExpiry {
				delete(sh.accounts, k)
			}
		}
	}
	a := sh.accounts[id]
	if a == nil {
		a = &localAccount{holds: make(map[*Hold]localHold)}
		sh.accounts[id] = a
	}
	return a
}

// expire drops holds whose holder stopped renewing them, and renews, by
// ttl, those past their expiry whose holder still holds them. Holders are
// in this process: instead of a goroutine renewing each hold, a hold
// found past its expiry is renewed then if its holder still holds it
// (lazily, as a heartbeat would have), and dropped if it was abandoned.
func (a *localAccount) expire(now, ttl int64) {
	if now < a.nextExpiry || len(a.holds) == 0 {
		return
	}
	next := now + ttl
	for holder, h := range a.holds {
		if h.expiry > now {
			next = min(next, h.expiry)
			continue
		}
		if !holder.abandoned.Load() {
			h.expiry = now + ttl
			a.holds[holder] = h
			continue
		}
		a.dropHold(holder, h)
	}
	a.nextExpiry = next
}

// available brings the mirror up to date with the ledger balance r
// carries and returns the balance minus the holds. It seeds the mirror
// when there is none or it is older than ttl, and adds what the ledger
// gained since the mirror last took it in: charges only lower the ledger,
// so a rise is a credit.
func (a *localAccount) available(now, ttl, holdTTL int64, r Reservation) int64 {
	a.expire(now, holdTTL)
	switch {
	case !a.mirrored || now >= a.mirrorExpiry:
		a.mirrored, a.balance, a.base, a.mirrorExpiry = true, r.Balance, r.Balance, now+ttl
	case r.Balance > a.base:
		a.balance += r.Balance - a.base
		a.base = r.Balance
	}
	return a.balance - a.held
}

// settle implements holdSettler: it frees h and lowers the mirror by
// the charge, at once whether gathered or not.
func (l *Local) settle(h *Hold, charge int64, _ bool) {
	account := h.account
	sh := l.accountShard(account)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	a := sh.accounts[account]
	if a == nil {
		return // swept: its holds had expired and its mirror too
	}
	if lh, ok := a.holds[h]; ok {
		a.dropHold(h, lh)
		if k := a.keys[lh.key]; lh.key != "" && k != nil {
			k.spent += charge
		}
	}
	if a.mirrored && l.nanos() < a.mirrorExpiry {
		a.balance -= charge
	}
}

// stopRenewal implements holdSettler: in process a hold is renewed only
// lazily, when its holder is found still holding it.
func (*Local) stopRenewal(*Hold) {}

// Held sums the account's unexpired holds on this node, which are all of
// them: a Local's holds are its own.
func (l *Local) Held(_ context.Context, account string) (int64, error) {
	sh := l.accountShard(account)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	a := sh.accounts[account]
	if a == nil {
		return 0, nil
	}
	a.expire(l.nanos(), l.holdTTL)
	return a.held, nil
}
