package sqlstore

import (
	"context"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// keySpendRow is a key's spend and spend alert as the statement that
// added a batch's charges to it left them.
type keySpendRow struct {
	accountID                              string
	limit, spend, periodStart, firedPeriod int64
	period                                 string
}

// alertDestinations are an account's alert settings as a ledger
// transaction needs them; found is false for an account without any.
type alertDestinations struct {
	found           bool
	webhook, email  string
	keySpendPercent *int64
}

// accountAlerts reads (once per transaction, through cache) where an
// account's alerts go and its key spend share.
func accountAlerts(ctx context.Context, tx Tx, cache map[string]alertDestinations, accountID string) (alertDestinations, error) {
	if d, ok := cache[accountID]; ok {
		return d, nil
	}
	var d alertDestinations
	var percent int64
	err := tx.QueryRow(ctx, `SELECT webhook_url, email, COALESCE(key_spend_percent, -1) FROM alert_settings
		WHERE account_id = $1`, accountID).Scan(&d.webhook, &d.email, &percent)
	if err != nil && !noRows(err) {
		return alertDestinations{}, err
	}
	d.found = err == nil
	if percent > 0 {
		d.keySpendPercent = &percent
	}
	cache[accountID] = d
	return d, nil
}

// checkKeySpendAlert fires or re-arms a key's spend alert after its
// spend was raised, in that same transaction: the key's row is locked
// by the update until commit, so of two batches charging one key, in any
// processes, the second sees the alert the first fired.
func checkKeySpendAlert(ctx context.Context, tx Tx, cache map[string]alertDestinations, keyID string, k keySpendRow, now time.Time) error {
	if k.limit <= 0 {
		return nil
	}
	dest, err := accountAlerts(ctx, tx, cache, k.accountID)
	if err != nil || !dest.found {
		return err
	}
	st := storage.KeySpendState{LimitCents: k.limit, SpendCents: k.spend, PeriodStart: fromMicros(k.periodStart)}
	if k.firedPeriod != 0 {
		st.FiredFor = fromMicros(k.firedPeriod)
	}
	fire, rearm := storage.KeySpendDecision(st, dest.keySpendPercent)
	switch {
	case rearm:
		_, err := tx.Exec(ctx, `UPDATE api_keys SET spend_alert_period = 0 WHERE id = $1`, keyID)
		return err
	case !fire:
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE api_keys SET spend_alert_period = $2 WHERE id = $1`, keyID, k.periodStart); err != nil {
		return err
	}
	threshold := storage.KeySpendThreshold(k.limit, *dest.keySpendPercent)
	at := micros(now)
	for _, ch := range []struct{ name, to string }{{storage.AlertWebhook, dest.webhook}, {storage.AlertEmail, dest.email}} {
		if ch.to == "" {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO alert_deliveries (id, account_id, channel, kind, balance_cents,
			threshold_cents, status, next_attempt_at, created_at, key_id, spend_cents, limit_cents, spend_period)
			VALUES ($1, $2, $3, $4, 0, $5, $6, $7, $8, $9, $10, $11, $12)`,
			newTimeID("alrt_", at), k.accountID, ch.name, storage.AlertKeySpend, threshold, storage.AlertPending, at, at,
			keyID, k.spend, k.limit, k.period); err != nil {
			return err
		}
	}
	return nil
}
