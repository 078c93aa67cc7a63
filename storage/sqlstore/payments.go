package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// RecordPaymentEvent records the event and posts its entries in one
// transaction. The event's row is inserted first: of two deliveries of
// one event racing in two processes, the second waits on the first's
// row (PostgreSQL) or write lock (SQLite) and then finds it, so it posts
// nothing. Entries are posted under the account row's lock, each only if
// its reference is new, so two events about one provider object (a
// completed checkout and its asynchronous success, a refund's creation
// and its update) post it once whatever their order.
func (s *Store) RecordPaymentEvent(ctx context.Context, ev storage.PaymentEvent) (storage.PaymentResult, error) {
	if ev.Provider == "" || ev.EventID == "" {
		return storage.PaymentResult{}, errors.New("storage: a payment event needs a provider and an event id")
	}
	for _, e := range ev.Entries {
		if e.Reference == "" || e.Kind == "" || e.AccountID != ev.AccountID {
			return storage.PaymentResult{}, errors.New("storage: a payment entry needs a kind, a reference and the event's account")
		}
	}
	now := s.now()
	var res storage.PaymentResult
	err := s.inTx(ctx, func(tx Tx) error {
		res = storage.PaymentResult{}
		n, err := tx.Exec(ctx, `INSERT INTO payment_events (provider, event_id, type, account_id, outcome, received_at)
			VALUES ($1, $2, $3, $4, '', $5) ON CONFLICT (provider, event_id) DO NOTHING`,
			ev.Provider, ev.EventID, ev.Type, ev.AccountID, micros(now))
		if err != nil {
			return err
		}
		if n == 0 {
			res.Duplicate = true
			return nil
		}
		res.Outcome = ev.Outcome
		if len(ev.Entries) > 0 {
			if res.Outcome, err = s.postPayment(ctx, tx, ev, &res, now); err != nil {
				return err
			}
		}
		if p := ev.Payment; p != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO payments (provider, payment_id, account_id, amount_cents, created_at)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, payment_id) DO NOTHING`,
				ev.Provider, p.PaymentID, p.AccountID, p.AmountCents, micros(now)); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE payment_events SET outcome = $3 WHERE provider = $1 AND event_id = $2`,
			ev.Provider, ev.EventID, res.Outcome)
		return err
	})
	if err != nil {
		return storage.PaymentResult{}, wrap(err, "recording payment event")
	}
	return res, nil
}

// postPayment posts the event's entries that are new, under the account's
// ledger lock, and returns the outcome to record.
func (s *Store) postPayment(ctx context.Context, tx Tx, ev storage.PaymentEvent, res *storage.PaymentResult, now time.Time) (string, error) {
	head, err := s.lockLedger(ctx, tx, ev.AccountID)
	if err != nil {
		return "", err
	}
	start := head
	var credit, debit int64
	for _, e := range ev.Entries {
		existing, err := s.entryByReference(ctx, tx, e.AccountID, e.Kind, e.Reference)
		if err == nil {
			res.Existing = append(res.Existing, existing)
			continue
		}
		if !noRows(err) {
			return "", err
		}
		var posted storage.LedgerEntry
		if posted, head, err = insertEntry(ctx, tx, head, e, now); err != nil {
			return "", err
		}
		res.Posted = append(res.Posted, posted)
		if e.AmountCents >= 0 {
			credit += e.AmountCents
		} else {
			debit -= e.AmountCents
		}
	}
	if head != start {
		if err := writeHead(ctx, tx, ev.AccountID, head, now); err != nil {
			return "", err
		}
	}
	switch {
	case len(res.Posted) == 0:
		return "already_applied", nil
	case credit >= debit:
		return "credited", nil
	default:
		return "debited", nil
	}
}

// PaymentByID reads the payments table's row.
func (s *Store) PaymentByID(ctx context.Context, provider, paymentID string) (storage.Payment, error) {
	p := storage.Payment{Provider: provider, PaymentID: paymentID}
	var created int64
	err := s.db.QueryRow(ctx, `SELECT account_id, amount_cents, created_at FROM payments WHERE provider = $1 AND payment_id = $2`,
		provider, paymentID).Scan(&p.AccountID, &p.AmountCents, &created)
	if noRows(err) {
		return storage.Payment{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.Payment{}, wrap(err, "reading payment")
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

// Receipts lists the entries whose reference has the payment prefix. The
// prefix ends in a character LIKE does not treat specially.
func (s *Store) Receipts(ctx context.Context, accountID string, limit int) ([]storage.LedgerEntry, error) {
	query := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE account_id = $1 AND reference LIKE $2
		ORDER BY seq DESC` + limitClause(limit)
	entries, err := queryAll(ctx, s.db, scanEntry, query, accountID, storage.PaymentReferencePrefix+"%")
	return entries, wrap(err, "listing receipts")
}

// ReceiptsAfter pages by seq, the order Receipts lists in.
func (s *Store) ReceiptsAfter(ctx context.Context, accountID, after string, limit int) ([]storage.LedgerEntry, error) {
	var seq int64
	err := s.db.QueryRow(ctx, `SELECT seq FROM ledger_entries WHERE id = $1 AND account_id = $2 AND reference LIKE $3`,
		after, accountID, storage.PaymentReferencePrefix+"%").Scan(&seq)
	if noRows(err) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, wrap(err, "finding a receipt cursor")
	}
	query := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE account_id = $1 AND reference LIKE $2 AND seq < $3
		ORDER BY seq DESC` + limitClause(limit)
	entries, err := queryAll(ctx, s.db, scanEntry, query, accountID, storage.PaymentReferencePrefix+"%", seq)
	return entries, wrap(err, "listing receipts")
}
