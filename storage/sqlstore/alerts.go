package sqlstore

import (
	"context"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// SetAlertSettings writes the thresholds onto the account row, where
// every ledger append reads them, and the destinations into
// alert_settings, and re-arms the alert, in one transaction.
func (s *Store) SetAlertSettings(ctx context.Context, a storage.AlertSettings) (storage.AlertSettings, error) {
	now := s.now()
	err := s.inTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE accounts SET alert_below_cents = $2, alert_below_percent = $3, alert_fired_at = NULL
			WHERE id = $1 AND deleted_at IS NULL`, a.AccountID, nullable(a.BelowCents), nullable(a.BelowPercent))
		if err != nil {
			return err
		}
		if n == 0 {
			return storage.ErrNotFound
		}
		_, err = tx.Exec(ctx, `INSERT INTO alert_settings (account_id, webhook_url, webhook_secret, email, updated_at, key_spend_percent)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id) DO UPDATE SET
			webhook_url = excluded.webhook_url, webhook_secret = excluded.webhook_secret,
			email = excluded.email, updated_at = excluded.updated_at, key_spend_percent = excluded.key_spend_percent`,
			a.AccountID, a.WebhookURL, a.WebhookSecret, a.Email, micros(now), nullable(a.KeySpendPercent))
		if err != nil {
			return err
		}
		// Re-arm the keys' spend alerts too: a key already past the new
		// share alerts with its next charge.
		_, err = tx.Exec(ctx, `UPDATE api_keys SET spend_alert_period = 0 WHERE account_id = $1 AND spend_alert_period <> 0`, a.AccountID)
		return err
	})
	if err != nil {
		return storage.AlertSettings{}, wrap(err, "writing alert settings")
	}
	return s.AlertSettings(ctx, a.AccountID)
}

// nullable is v for a statement: NULL when nil.
func nullable(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// AlertSettings reads the account row's thresholds and the settings row.
func (s *Store) AlertSettings(ctx context.Context, accountID string) (storage.AlertSettings, error) {
	a := storage.AlertSettings{AccountID: accountID}
	var below, percent, keySpend, fired, updated int64
	err := s.db.QueryRow(ctx, `SELECT COALESCE(a.alert_below_cents, -1), COALESCE(a.alert_below_percent, -1),
		a.last_topup_cents, COALESCE(a.alert_fired_at, 0),
		COALESCE(s.webhook_url, ''), COALESCE(s.webhook_secret, ''), COALESCE(s.email, ''), COALESCE(s.updated_at, 0),
		COALESCE(s.key_spend_percent, -1)
		FROM accounts a LEFT JOIN alert_settings s ON s.account_id = a.id WHERE a.id = $1`, accountID).
		Scan(&below, &percent, &a.LastTopUpCents, &fired, &a.WebhookURL, &a.WebhookSecret, &a.Email, &updated, &keySpend)
	if noRows(err) {
		return storage.AlertSettings{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.AlertSettings{}, wrap(err, "reading alert settings")
	}
	if below >= 0 {
		a.BelowCents = &below
	}
	if percent >= 0 {
		a.BelowPercent = &percent
	}
	if keySpend >= 0 {
		a.KeySpendPercent = &keySpend
	}
	a.FiredAt, a.UpdatedAt = fromMicros(fired), fromMicros(updated)
	return a, nil
}

// alertChannels is the channels (storage.AlertWebhook, storage.AlertEmail)
// an account has a destination for; none without alert settings.
func alertChannels(ctx context.Context, tx Tx, accountID string) ([]string, error) {
	var webhook, email string
	err := tx.QueryRow(ctx, `SELECT webhook_url, email FROM alert_settings WHERE account_id = $1`, accountID).
		Scan(&webhook, &email)
	if noRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var channels []string
	if webhook != "" {
		channels = append(channels, storage.AlertWebhook)
	}
	if email != "" {
		channels = append(channels, storage.AlertEmail)
	}
	return channels, nil
}

// queueAlerts queues one delivery per destination the account has, in
// the transaction that moved its balance below threshold.
func queueAlerts(ctx context.Context, tx Tx, accountID string, balance, threshold int64, now time.Time) error {
	channels, err := alertChannels(ctx, tx, accountID)
	if err != nil {
		return err
	}
	at := micros(now)
	for _, channel := range channels {
		if _, err := tx.Exec(ctx, `INSERT INTO alert_deliveries (id, account_id, channel, kind, balance_cents,
			threshold_cents, status, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			newTimeID("alrt_", at), accountID, channel, storage.AlertBalanceBelow, balance, threshold, storage.AlertPending, at, at); err != nil {
			return err
		}
	}
	return nil
}

// deliveryColumns are read from alert_deliveries d joined with its
// account a.
const deliveryColumns = `d.id, d.account_id, a.name, d.channel, d.kind, d.balance_cents, d.threshold_cents, d.status,
	d.attempts, d.next_attempt_at, d.last_error, d.created_at, COALESCE(d.delivered_at, 0),
	d.key_id, COALESCE(k.label, ''), d.spend_cents, d.limit_cents, d.spend_period, d.detail, d.failures`

const deliveryFrom = ` FROM alert_deliveries d JOIN accounts a ON a.id = d.account_id LEFT JOIN api_keys k ON k.id = d.key_id`

func scanDelivery(r Row) (storage.AlertDelivery, error) {
	var d storage.AlertDelivery
	var attempts, next, created, delivered int64
	var period string
	if err := r.Scan(&d.ID, &d.AccountID, &d.AccountName, &d.Channel, &d.Kind, &d.BalanceCents, &d.ThresholdCents, &d.Status,
		&attempts, &next, &d.LastError, &created, &delivered,
		&d.KeyID, &d.KeyLabel, &d.SpendCents, &d.LimitCents, &period, &d.Detail, &d.Failures); err != nil {
		return storage.AlertDelivery{}, err
	}
	d.SpendPeriod = storage.SpendPeriod(period)
	d.Attempts = int(attempts)
	d.NextAttemptAt, d.CreatedAt, d.DeliveredAt = fromMicros(next), fromMicros(created), fromMicros(delivered)
	return d, nil
}

// ClaimAlertDelivery picks the oldest due delivery and takes it with a
// conditional UPDATE: of two claimers that picked the same row, the
// second finds its lease taken and picks again.
func (s *Store) ClaimAlertDelivery(ctx context.Context, now time.Time, lease time.Duration) (storage.AlertDelivery, error) {
	at := micros(now)
	for range 8 {
		var id string
		err := s.db.QueryRow(ctx, `SELECT id FROM alert_deliveries WHERE status = $1 AND next_attempt_at <= $2
			AND lease_until <= $3 ORDER BY next_attempt_at, id LIMIT 1`, storage.AlertPending, at, at).Scan(&id)
		if noRows(err) {
			return storage.AlertDelivery{}, storage.ErrNotFound
		}
		if err != nil {
			return storage.AlertDelivery{}, wrap(err, "claiming alert delivery")
		}
		n, err := s.db.Exec(ctx, `UPDATE alert_deliveries SET lease_until = $2, attempts = attempts + 1
			WHERE id = $1 AND status = $3 AND lease_until <= $4`, id, micros(now.Add(lease)), storage.AlertPending, at)
		if err != nil {
			return storage.AlertDelivery{}, wrap(err, "claiming alert delivery")
		}
		if n == 1 {
			d, err := scanDelivery(s.db.QueryRow(ctx, `SELECT `+deliveryColumns+deliveryFrom+` WHERE d.id = $1`, id))
			return d, wrap(err, "claiming alert delivery")
		}
	}
	// Others keep winning the rows this one picks: they are sending.
	return storage.AlertDelivery{}, storage.ErrNotFound
}

// FinishAlertDelivery records an attempt's end and releases the lease.
func (s *Store) FinishAlertDelivery(ctx context.Context, id, status, lastError string, next time.Time) error {
	var delivered any
	if status == storage.AlertDelivered {
		delivered = micros(s.now())
	}
	_, err := s.db.Exec(ctx, `UPDATE alert_deliveries SET status = $2, last_error = $3, next_attempt_at = $4,
		lease_until = 0, delivered_at = $5 WHERE id = $1`, id, status, lastError, micros(next), delivered)
	return wrap(err, "finishing alert delivery")
}

// AlertDeliveries lists an account's deliveries by id, newest first.
func (s *Store) AlertDeliveries(ctx context.Context, accountID string, limit int) ([]storage.AlertDelivery, error) {
	out, err := queryAll(ctx, s.db, scanDelivery, `SELECT `+deliveryColumns+deliveryFrom+`
		WHERE d.account_id = $1 ORDER BY d.id DESC`+limitClause(limit), accountID)
	return out, wrap(err, "listing alert deliveries")
}

// AlertDeliveriesAfter pages by id, the order AlertDeliveries lists in
// (ids begin with their creation time).
func (s *Store) AlertDeliveriesAfter(ctx context.Context, accountID, after string, limit int) ([]storage.AlertDelivery, error) {
	var id string
	err := s.db.QueryRow(ctx, `SELECT id FROM alert_deliveries WHERE id = $1 AND account_id = $2`, after, accountID).Scan(&id)
	if noRows(err) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, wrap(err, "finding an alert delivery cursor")
	}
	out, err := queryAll(ctx, s.db, scanDelivery, `SELECT `+deliveryColumns+deliveryFrom+`
		WHERE d.account_id = $1 AND d.id < $2 ORDER BY d.id DESC`+limitClause(limit), accountID, id)
	return out, wrap(err, "listing alert deliveries")
}
