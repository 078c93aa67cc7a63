package limits

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// LedgerBalance reads an account's balance from the ledger of record.
type LedgerBalance func(ctx context.Context, account string) (int64, error)

// ReconcileResult is what ReconcileBalances did.
type ReconcileResult struct {
	Mirrors int // mirrored balances looked at
	Lowered int // mirrors that stood above the ledger and were lowered to it
	Skipped int // mirrors whose ledger balance could not be read
}

// ReconcileBalances lowers every mirrored balance that stands above its
// account's ledger balance to it. A node that was killed between
// committing a charge and settling its hold left the charge out of the
// mirror; this takes it in, instead of letting the account spend the
// difference again until the mirror expires (BalanceTTL). Run it when a
// node starts.
//
// It only ever lowers a mirror, so that it is safe while other nodes
// admit and settle, and when several nodes start at once: a mirror below
// the ledger (a charge whose settling lowers it again, or a credit the
// mirror has yet to take in) only makes admissions stricter until the
// mirror expires, never looser. Holds need nothing: those of a dead node
// expire LeaseTTL after its last renewal, and up to a second later.
//
// It walks the mirrors with SCAN and reads the ledger once per mirror,
// so it costs one round trip to the ledger per account active within
// BalanceTTL. Accounts whose balance fails to read are skipped and
// counted; the error returned is Redis's or ctx's.
func (r *Redis) ReconcileBalances(ctx context.Context, ledger LedgerBalance) (ReconcileResult, error) {
	var res ReconcileResult
	pattern := globEscape(r.prefix+"{acct:") + "*" + globEscape("}:balance")
	keys, scanErr := scanKeys(ctx, r.client, pattern)
	var errs []error
	for _, key := range keys {
		account, ok := strings.CutPrefix(key, r.prefix+"{acct:")
		if !ok {
			continue
		}
		account, ok = strings.CutSuffix(account, "}:balance")
		if !ok || account == "" {
			continue
		}
		res.Mirrors++
		balance, err := ledger(ctx, account)
		if err != nil {
			res.Skipped++
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			continue
		}
		lowered, err := reconcileScript.Run(ctx, r.client, []string{key}, balance).Int()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res.Lowered += lowered
	}
	errs = append(errs, scanErr)
	return res, errors.Join(errs...)
}

// scanKeys returns the keys matching pattern, of every primary when
// client is a Redis Cluster's.
func scanKeys(ctx context.Context, client redis.UniversalClient, pattern string) ([]string, error) {
	scan := func(ctx context.Context, c redis.Cmdable) ([]string, error) {
		var keys []string
		iter := c.Scan(ctx, 0, pattern, 256).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return keys, iter.Err()
	}
	cluster, ok := client.(*redis.ClusterClient)
	if !ok {
		return scan(ctx, client)
	}
	var mu sync.Mutex
	var all []string
	err := cluster.ForEachMaster(ctx, func(ctx context.Context, primary *redis.Client) error {
		keys, err := scan(ctx, primary)
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	})
	return all, err
}

// reconcileScript lowers a mirrored balance to the ledger's when it
// stands above it. The base (the ledger balance last taken in) stays:
// credits are still told from charges against it.
//
// KEYS[1]: the account's mirrored balance; ARGV[1]: the ledger balance
// Returns 1 when lowered, 0 otherwise (also for a mirror that expired
// meanwhile: the next admission seeds it from the ledger).
var reconcileScript = redis.NewScript(`
local bal = tonumber(redis.call("HGET", KEYS[1], "bal"))
local ledger = tonumber(ARGV[1])
if not bal or bal <= ledger then
  return 0
end
redis.call("HSET", KEYS[1], "bal", string.format("%d", ledger))
return 1
`)

// globEscape quotes the characters SCAN's MATCH pattern treats as
// special, so that a prefix holding them matches only itself.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '\\', '^', '-':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
