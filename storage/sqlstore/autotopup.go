package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

var _ storage.AutoTopUps = (*Store)(nil)

const autoTopUpColumns = `t.enabled, t.threshold_cents, t.amount_cents, t.customer_id, t.payment_method_id, t.attempts,
	t.in_flight, t.in_flight_since, t.payment_id, t.failures, t.last_error, t.next_attempt_at, t.updated_at`

// AutoTopUp reads the account's row; an account without one is off.
func (s *Store) AutoTopUp(ctx context.Context, accountID string) (storage.AutoTopUp, error) {
	var exists int64
	err := s.db.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1`, accountID).Scan(&exists)
	if noRows(err) {
		return storage.AutoTopUp{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.AutoTopUp{}, wrap(err, "reading auto top-up")
	}
	a := storage.AutoTopUp{AccountID: accountID}
	var enabled, since, next, updated int64
	err = s.db.QueryRow(ctx, `SELECT `+autoTopUpColumns+` FROM auto_topups t WHERE t.account_id = $1`, accountID).Scan(
		&enabled, &a.ThresholdCents, &a.AmountCents, &a.CustomerID, &a.PaymentMethodID, &a.Attempts,
		&a.InFlight, &since, &a.PaymentID, &a.Failures, &a.LastError, &next, &updated)
	if noRows(err) {
		return a, nil
	}
	if err != nil {
		return storage.AutoTopUp{}, wrap(err, "reading auto top-up")
	}
	a.Enabled = enabled != 0
	a.InFlightSince, a.NextAttemptAt, a.UpdatedAt = fromMicros(since), fromMicros(next), fromMicros(updated)
	return a, nil
}

// ensureAutoTopUpRow makes the account's row if it has none, so that the
// statements after it can update it. ErrNotFound for an account that is
// not live.
func (s *Store) ensureAutoTopUpRow(ctx context.Context, tx Tx, accountID string, now time.Time) error {
	var exists int64
	err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1 AND deleted_at IS NULL`, accountID).Scan(&exists)
	if noRows(err) {
		return storage.ErrNotFound
	}
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO auto_topups (account_id, updated_at) VALUES ($1, $2)
		ON CONFLICT (account_id) DO NOTHING`, accountID, micros(now))
	return err
}

// SetAutoTopUpSettings writes the settings and clears the failures.
func (s *Store) SetAutoTopUpSettings(ctx context.Context, accountID string, enabled bool, thresholdCents, amountCents int64) (storage.AutoTopUp, error) {
	now := s.now()
	on := int64(0)
	if enabled {
		on = 1
	}
	err := s.inTx(ctx, func(tx Tx) error {
		if err := s.ensureAutoTopUpRow(ctx, tx, accountID, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE auto_topups SET enabled = $2, threshold_cents = $3, amount_cents = $4,
			failures = 0, next_attempt_at = 0, updated_at = $5 WHERE account_id = $1`,
			accountID, on, thresholdCents, amountCents, micros(now))
		return err
	})
	if err != nil {
		return storage.AutoTopUp{}, wrap(err, "writing auto top-up")
	}
	return s.AutoTopUp(ctx, accountID)
}

// SetAutoTopUpCustomer records the customer.
func (s *Store) SetAutoTopUpCustomer(ctx context.Context, accountID, customerID string) error {
	now := s.now()
	return wrap(s.inTx(ctx, func(tx Tx) error {
		if err := s.ensureAutoTopUpRow(ctx, tx, accountID, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE auto_topups SET customer_id = $2, updated_at = $3 WHERE account_id = $1`,
			accountID, customerID, micros(now))
		return err
	}), "writing auto top-up customer")
}

// SaveAutoTopUpPaymentMethod records the payment method and its
// customer. A new card is a fresh start: earlier failures were another
// card's.
func (s *Store) SaveAutoTopUpPaymentMethod(ctx context.Context, accountID, customerID, paymentMethodID string) error {
	now := s.now()
	return wrap(s.inTx(ctx, func(tx Tx) error {
		if err := s.ensureAutoTopUpRow(ctx, tx, accountID, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE auto_topups SET customer_id = $2, payment_method_id = $3, failures = 0,
			next_attempt_at = 0, updated_at = $4 WHERE account_id = $1`, accountID, customerID, paymentMethodID, micros(now))
		return err
	}), "writing auto top-up payment method")
}

// autoTopUpDue is the condition of a row of auto_topups an attempt may
// start for, with $2 the time now and $3 the time before which an
// attempt in flight without a payment is stale. It names the row's own
// columns only (and the account's), so that PostgreSQL re-checks it on
// the row a concurrent claim just changed.
const autoTopUpDue = `auto_topups.enabled = 1 AND auto_topups.payment_method_id <> '' AND auto_topups.amount_cents > 0
	AND auto_topups.threshold_cents > (SELECT a.balance_cents FROM accounts a
		WHERE a.id = auto_topups.account_id AND a.deleted_at IS NULL AND a.disabled_at IS NULL)
	AND ((auto_topups.in_flight = '' AND auto_topups.next_attempt_at <= $2)
		OR (auto_topups.in_flight <> '' AND auto_topups.payment_id = '' AND auto_topups.in_flight_since < $3))`

// ClaimAutoTopUp takes the row with one conditional UPDATE: of two
// claimers, in any processes, the second's finds the attempt in flight
// (the first's row lock or SQLite's write lock makes it wait and then
// re-read the row) and changes nothing.
func (s *Store) ClaimAutoTopUp(ctx context.Context, accountID string, now time.Time, stale time.Duration) (storage.AutoTopUpAttempt, error) {
	var at storage.AutoTopUpAttempt
	err := s.inTx(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE auto_topups SET
			attempts = CASE WHEN in_flight = '' THEN attempts + 1 ELSE attempts END,
			in_flight_since = $2, updated_at = $2
			WHERE account_id = $1 AND `+autoTopUpDue,
			accountID, micros(now), micros(now.Add(-stale)))
		if err != nil {
			return err
		}
		if n == 0 {
			return storage.ErrNotFound
		}
		var attempts int64
		var inFlight string
		if err := tx.QueryRow(ctx, `SELECT attempts, in_flight, amount_cents, customer_id, payment_method_id
			FROM auto_topups WHERE account_id = $1`, accountID).
			Scan(&attempts, &inFlight, &at.AmountCents, &at.CustomerID, &at.PaymentMethodID); err != nil {
			return err
		}
		at.AccountID, at.Key = accountID, inFlight
		if inFlight == "" {
			at.Key = fmt.Sprintf("autotopup:%s:%d", accountID, attempts)
			_, err = tx.Exec(ctx, `UPDATE auto_topups SET in_flight = $2 WHERE account_id = $1`, accountID, at.Key)
		}
		return err
	})
	if err != nil {
		return storage.AutoTopUpAttempt{}, wrap(err, "claiming auto top-up")
	}
	return at, nil
}

// DueAutoTopUps lists the accounts ClaimAutoTopUp would start for.
func (s *Store) DueAutoTopUps(ctx context.Context, now time.Time, stale time.Duration, limit int) ([]string, error) {
	ids, err := queryAll(ctx, s.db, func(r Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT account_id FROM auto_topups WHERE account_id <> $1 AND `+autoTopUpDue+` ORDER BY account_id`+limitClause(limit),
		"", micros(now), micros(now.Add(-stale)))
	return ids, wrap(err, "listing due auto top-ups")
}

// SetAutoTopUpIntent records the attempt's PaymentIntent.
func (s *Store) SetAutoTopUpIntent(ctx context.Context, accountID, key, paymentID string) error {
	_, err := s.db.Exec(ctx, `UPDATE auto_topups SET payment_id = $3, updated_at = $4 WHERE account_id = $1 AND in_flight = $2`,
		accountID, key, paymentID, micros(s.now()))
	return wrap(err, "recording auto top-up payment")
}

// FinishAutoTopUp ends the attempt in flight, once, and on a failure
// queues its alert in the same transaction.
func (s *Store) FinishAutoTopUp(ctx context.Context, accountID, key string, ok bool, reason string, now time.Time, retryAfter time.Duration) (storage.AutoTopUpResult, error) {
	if len(reason) > 500 {
		reason = reason[:500]
	}
	var res storage.AutoTopUpResult
	err := s.inTx(ctx, func(tx Tx) error {
		res = storage.AutoTopUpResult{}
		if key == "" {
			return nil
		}
		var n int64
		var err error
		if ok {
			n, err = tx.Exec(ctx, `UPDATE auto_topups SET in_flight = '', payment_id = '', failures = 0, last_error = '',
				next_attempt_at = 0, updated_at = $3 WHERE account_id = $1 AND in_flight = $2`, accountID, key, micros(now))
		} else {
			n, err = tx.Exec(ctx, `UPDATE auto_topups SET in_flight = '', payment_id = '', failures = failures + 1,
				last_error = $3, next_attempt_at = $4, updated_at = $5,
				enabled = CASE WHEN failures + 1 >= $6 THEN 0 ELSE enabled END
				WHERE account_id = $1 AND in_flight = $2`,
				accountID, key, reason, micros(now.Add(retryAfter)), micros(now), int64(storage.AutoTopUpMaxFailures))
		}
		if err != nil || n == 0 {
			return err
		}
		res.Finished = true
		if ok {
			return nil
		}
		var enabled, threshold, amount int64
		if err := tx.QueryRow(ctx, `SELECT failures, enabled, threshold_cents, amount_cents FROM auto_topups WHERE account_id = $1`,
			accountID).Scan(&res.Failures, &enabled, &threshold, &amount); err != nil {
			return err
		}
		res.Disabled = enabled == 0 && res.Failures >= storage.AutoTopUpMaxFailures
		return queueAutoTopUpAlert(ctx, tx, accountID, threshold, amount, reason, res.Failures, now)
	})
	if err != nil {
		return storage.AutoTopUpResult{}, wrap(err, "finishing auto top-up")
	}
	return res, nil
}

// queueAutoTopUpAlert queues one delivery per destination of the
// account's alerts.
func queueAutoTopUpAlert(ctx context.Context, tx Tx, accountID string, threshold, amount int64, reason string, failures int64, now time.Time) error {
	var balance int64
	if err := tx.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, accountID).Scan(&balance); err != nil {
		return err
	}
	channels, err := alertChannels(ctx, tx, accountID)
	if err != nil {
		return err
	}
	at := micros(now)
	for _, channel := range channels {
		if _, err := tx.Exec(ctx, `INSERT INTO alert_deliveries (id, account_id, channel, kind, balance_cents,
			threshold_cents, status, next_attempt_at, created_at, limit_cents, detail, failures)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			newTimeID("alrt_", at), accountID, channel, storage.AlertAutoTopUpFailed, balance, threshold,
			storage.AlertPending, at, at, amount, reason, failures); err != nil {
			return err
		}
	}
	return nil
}
