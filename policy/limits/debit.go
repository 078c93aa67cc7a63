package limits

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Debiter takes into an account's mirrored balance, at once, a debit the
// ledger took outside of charges: a refund, a lost dispute. Charges lower
// the mirror as they settle and credits raise it on the next lookup, but
// a debit would otherwise reach it only when it expires (BalanceTTL),
// and until then the account could spend what it no longer has.
type Debiter interface {
	// Debit lowers the account's mirror, where one is alive, by cents
	// (positive). An account with no mirror needs nothing: the next
	// admission seeds one from a ledger balance that has the debit.
	Debit(ctx context.Context, account string, cents int64) error
}

// Debit implements Debiter. The mirror's base (the ledger balance last
// taken in) is lowered with it, so that a later credit is still told by
// the ledger rising above the base, by its whole amount.
func (l *Local) Debit(_ context.Context, account string, cents int64) error {
	if cents <= 0 {
		return nil
	}
	sh := l.accountShard(account)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if a := sh.accounts[account]; a != nil && a.mirrored && l.nanos() < a.mirrorExpiry {
		a.balance -= cents
		a.base -= cents
	}
	return nil
}

// Debit implements Debiter, for every node at once: the mirror is
// shared in Redis.
func (r *Redis) Debit(ctx context.Context, account string, cents int64) error {
	if cents <= 0 {
		return nil
	}
	return r.call(ctx, "debit", func(ctx context.Context) error {
		return debitScript.Run(ctx, r.client, []string{r.balanceKey(account)}, cents).Err()
	})
}

// debitScript lowers a live mirror and its base by a debit.
//
// KEYS[1]: the account's mirrored balance; ARGV[1]: the debit in cents
var debitScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
redis.call("HINCRBY", KEYS[1], "bal", -tonumber(ARGV[1]))
redis.call("HINCRBY", KEYS[1], "base", -tonumber(ARGV[1]))
return 1
`)

// Interface guards.
var (
	_ Debiter = (*Local)(nil)
	_ Debiter = (*Redis)(nil)
)
