package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// keyControlColumns are the controls of api_keys, in the order
// controlArgs gives them and scanControls reads them.
const keyControlColumns = `COALESCE(expires_at, 0), models, cidrs, spend_limit_cents, spend_period, rate_per_minute, stream_limit`

// controlArgs are c's column values, expires_at first.
func controlArgs(c storage.KeyControls) []any {
	var expires any // NULL: never
	if !c.ExpiresAt.IsZero() {
		expires = micros(c.ExpiresAt)
	}
	period := ""
	if c.SpendLimitCents > 0 {
		period = string(c.SpendPeriod)
	}
	return []any{expires, strings.Join(c.Models, " "), strings.Join(c.CIDRs, " "),
		c.SpendLimitCents, period, int64(c.RatePerMinute), int64(c.StreamLimit)}
}

// controlScan holds the scanned columns of keyControlColumns.
type controlScan struct {
	expires, spend, rate, streams int64
	models, cidrs, period         string
}

func (c *controlScan) dest() []any {
	return []any{&c.expires, &c.models, &c.cidrs, &c.spend, &c.period, &c.rate, &c.streams}
}

func (c *controlScan) controls() storage.KeyControls {
	return storage.KeyControls{
		ExpiresAt:       fromMicros(c.expires),
		Models:          fields(c.models),
		CIDRs:           fields(c.cidrs),
		SpendLimitCents: c.spend,
		SpendPeriod:     storage.SpendPeriod(c.period),
		RatePerMinute:   int(c.rate),
		StreamLimit:     int(c.streams),
	}
}

// SetKeyControls replaces the controls of an active key and raises the
// key generation, so that cached lookups of it are read again.
func (s *Store) SetKeyControls(ctx context.Context, keyID string, c storage.KeyControls) (storage.APIKey, error) {
	var key storage.APIKey
	err := s.inTx(ctx, func(tx Tx) error {
		args := append([]any{keyID}, controlArgs(c)...)
		hashes, err := queryStrings(ctx, tx, `UPDATE api_keys SET expires_at = $2, models = $3, cidrs = $4,
			spend_limit_cents = $5, spend_period = $6, rate_per_minute = $7, stream_limit = $8
			WHERE id = $1 AND revoked_at IS NULL RETURNING hash`, args...)
		if err != nil {
			return err
		}
		if len(hashes) == 0 {
			return storage.ErrNotFound
		}
		if err := raiseKeyGeneration(ctx, tx, hashes); err != nil {
			return err
		}
		key, err = scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, keyID))
		return err
	})
	if err != nil {
		return storage.APIKey{}, wrap(err, "setting key controls")
	}
	return key, nil
}

// periodStartSQL is the start of the current spend period of the key
// row named alias, given the day's start as $2 and the month's as $3.
func periodStartSQL(alias string) string {
	return `CASE ` + alias + `.spend_period WHEN 'month' THEN CAST($3 AS BIGINT) ELSE CAST($2 AS BIGINT) END`
}

// markKeysUsed records, in the transaction that commits their charges,
// when the keys of the settled records were last used, and adds their
// charges to the keys' spend in the current period: one statement per
// key of the batch, never one per request. A key whose spend reaches its
// account's key spend share fires its alert there (checkKeySpendAlert). out[i].Err set means record
// i was not settled; a record settled before counts again, which can
// only make a spend limit refuse sooner.
func markKeysUsed(ctx context.Context, tx Tx, records []storage.UsageRecord, out []storage.Settlement, now time.Time) error {
	// A batch's keys are few: sized for its records, the map was most of
	// what the batch allocated here.
	spent := make(map[string]int64)
	var order []string
	for i, u := range records {
		if u.KeyID == "" || (out != nil && out[i].Err != nil) {
			continue
		}
		if _, ok := spent[u.KeyID]; !ok {
			order = append(order, u.KeyID)
		}
		spent[u.KeyID] += u.CostCents
	}
	day, month := micros(storage.SpendPerDay.Start(now)), micros(storage.SpendPerMonth.Start(now))
	alerts := make(map[string]alertDestinations)
	for _, id := range order {
		// $2 and $3 are the period starts periodStartSQL reads.
		var k keySpendRow
		err := tx.QueryRow(ctx, `UPDATE api_keys SET
				last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < $4 THEN $4 ELSE last_used_at END,
				period_spend_cents = CASE WHEN period_start = `+periodStartSQL("api_keys")+` THEN period_spend_cents + $5 ELSE $5 END,
				period_start = `+periodStartSQL("api_keys")+`
			WHERE id = $1
			RETURNING account_id, spend_limit_cents, period_spend_cents, period_start, spend_alert_period, spend_period`,
			id, day, month, micros(now), spent[id]).
			Scan(&k.accountID, &k.limit, &k.spend, &k.periodStart, &k.firedPeriod, &k.period)
		if noRows(err) {
			continue // a key id no row has: nothing to mark
		}
		if err != nil {
			return err
		}
		if err := checkKeySpendAlert(ctx, tx, alerts, id, k, now); err != nil {
			return err
		}
	}
	return nil
}

// fields splits a space-separated list, nil for none.
func fields(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}
