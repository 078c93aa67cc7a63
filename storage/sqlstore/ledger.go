package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

const entryColumns = `id, account_id, amount_cents, balance_after_cents, kind, reference, note, created_at`

// Post appends e to the ledger and moves accounts.balance_cents to the new
// balance_after_cents, in one transaction that starts by locking the
// account row. With the lock held, the duplicate check and the next
// sequence number cannot race another Post for the same account; the
// unique index on (account_id, kind, reference) is the last line of
// defence. References are unique per kind: a top-up spelt like a
// request's charge reference is a top-up of its own.
//
// Post accepts entries for deleted accounts, so that charges for requests
// in flight when the account was deleted still settle.
func (s *Store) Post(ctx context.Context, e storage.Entry) (storage.LedgerEntry, error) {
	if e.Reference == "" || e.Kind == "" {
		return storage.LedgerEntry{}, errors.New("storage: ledger entry needs a kind and a reference")
	}
	now := s.now()
	var posted, existing storage.LedgerEntry
	err := s.inTx(ctx, func(tx Tx) error {
		head, err := s.lockLedger(ctx, tx, e.AccountID)
		if err != nil {
			return err
		}
		existing, err = s.entryByReference(ctx, tx, e.AccountID, e.Kind, e.Reference)
		if err == nil {
			return storage.ErrDuplicateReference
		}
		if !noRows(err) {
			return err
		}
		posted, err = appendEntry(ctx, tx, head, e, now)
		return err
	})
	switch {
	case err == nil:
		return posted, nil
	case errors.Is(err, storage.ErrDuplicateReference):
		return existing, err
	case s.db.IsUniqueViolation(err):
		// Only reachable if the row lock did not serialise us, but if
		// it happens the answer is still the entry that won.
		if existing, lookupErr := s.entryByReference(ctx, s.db, e.AccountID, e.Kind, e.Reference); lookupErr == nil {
			return existing, storage.ErrDuplicateReference
		}
	}
	return storage.LedgerEntry{}, wrap(err, "posting ledger entry")
}

// ledgerHead is where an account's ledger stands: the running total and
// the seq of the last entry, and what its balance alert needs to know
// (the thresholds, the latest top-up, whether it has fired).
type ledgerHead struct {
	balance, seq int64
	lastTopUp    int64
	below        int64 // -1: not set
	percent      int64 // -1: not set
	fired        bool
}

// lockLedger locks the account row for the rest of tx and reads its
// ledger head. Everything that appends to a ledger calls it first, so
// that appends to one account, in any process, happen one at a time.
// storage.ErrNotFound if the account never existed.
func (s *Store) lockLedger(ctx context.Context, tx Tx, accountID string) (ledgerHead, error) {
	var h ledgerHead
	var fired int64
	err := tx.QueryRow(ctx, `SELECT balance_cents, ledger_seq, last_topup_cents, COALESCE(alert_below_cents, -1),
		COALESCE(alert_below_percent, -1), COALESCE(alert_fired_at, 0) FROM accounts WHERE id = $1`+s.dialect.ForUpdate,
		accountID).Scan(&h.balance, &h.seq, &h.lastTopUp, &h.below, &h.percent, &fired)
	if noRows(err) {
		return ledgerHead{}, storage.ErrNotFound
	}
	h.fired = fired != 0
	return h, err
}

// threshold is the head's alert threshold and whether one is set.
func (h ledgerHead) threshold() (int64, bool) {
	var below, percent *int64
	if h.below >= 0 {
		below = &h.below
	}
	if h.percent >= 0 {
		percent = &h.percent
	}
	return storage.AlertThreshold(below, percent, h.lastTopUp)
}

// appendEntry writes e as the entry after head and moves the account's
// running total to its balance_after_cents. The caller holds the lock
// from lockLedger and has checked that e.Reference is new.
func appendEntry(ctx context.Context, tx Tx, head ledgerHead, e storage.Entry, now time.Time) (storage.LedgerEntry, error) {
	posted, next, err := insertEntry(ctx, tx, head, e, now)
	if err != nil {
		return storage.LedgerEntry{}, err
	}
	return posted, writeHead(ctx, tx, e.AccountID, next, now)
}

// insertEntry writes e as the entry after head and returns it with the
// head it leaves. The account row still shows the old head until
// writeHead moves it, which must happen in the same transaction; a batch
// appends several entries and moves the head once.
func insertEntry(ctx context.Context, tx Tx, head ledgerHead, e storage.Entry, now time.Time) (storage.LedgerEntry, ledgerHead, error) {
	posted := storage.LedgerEntry{
		ID:                newTimeID("le_", micros(now)),
		AccountID:         e.AccountID,
		AmountCents:       e.AmountCents,
		BalanceAfterCents: head.balance + e.AmountCents,
		Kind:              e.Kind,
		Reference:         e.Reference,
		Note:              e.Note,
		CreatedAt:         fromMicros(micros(now)),
	}
	next := head
	next.balance, next.seq = posted.BalanceAfterCents, head.seq+1
	if e.Kind == storage.EntryTopUp && e.AmountCents > 0 {
		next.lastTopUp = e.AmountCents
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ledger_entries (`+entryColumns+`, seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		posted.ID, posted.AccountID, posted.AmountCents, posted.BalanceAfterCents,
		string(posted.Kind), posted.Reference, posted.Note, micros(now), next.seq); err != nil {
		return storage.LedgerEntry{}, ledgerHead{}, err
	}
	return posted, next, nil
}

// writeHead moves the account's running total and last seq to head. It
// is where balances change, under the account row's lock, so it is also
// where a balance alert fires: a balance left below the threshold while
// the alert is armed queues its deliveries and marks it fired, in this
// transaction, whichever process commits it; a balance left at or above
// the threshold re-arms it. Charges while below queue nothing.
func writeHead(ctx context.Context, tx Tx, accountID string, head ledgerHead, now time.Time) error {
	threshold, set := head.threshold()
	switch {
	case set && head.balance < threshold && !head.fired:
		if _, err := tx.Exec(ctx, `UPDATE accounts SET balance_cents = $2, ledger_seq = $3, last_topup_cents = $4,
			alert_fired_at = $5 WHERE id = $1`, accountID, head.balance, head.seq, head.lastTopUp, micros(now)); err != nil {
			return err
		}
		return queueAlerts(ctx, tx, accountID, head.balance, threshold, now)
	case head.fired && (!set || head.balance >= threshold):
		_, err := tx.Exec(ctx, `UPDATE accounts SET balance_cents = $2, ledger_seq = $3, last_topup_cents = $4,
			alert_fired_at = NULL WHERE id = $1`, accountID, head.balance, head.seq, head.lastTopUp)
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE accounts SET balance_cents = $2, ledger_seq = $3, last_topup_cents = $4 WHERE id = $1`,
		accountID, head.balance, head.seq, head.lastTopUp)
	return err
}

func (s *Store) entryByReference(ctx context.Context, q Querier, accountID string, kind storage.EntryKind, reference string) (storage.LedgerEntry, error) {
	return scanEntry(q.QueryRow(ctx, `SELECT `+entryColumns+` FROM ledger_entries
		WHERE account_id = $1 AND kind = $2 AND reference = $3`, accountID, string(kind), reference))
}

// Balance reads the running total kept on the account row.
func (s *Store) Balance(ctx context.Context, accountID string) (int64, error) {
	var cents int64
	err := s.db.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, accountID).Scan(&cents)
	if noRows(err) {
		return 0, storage.ErrNotFound
	}
	return cents, wrap(err, "reading balance")
}

// Entries lists the account's newest entries first; limit <= 0 lists all.
func (s *Store) Entries(ctx context.Context, accountID string, limit int) ([]storage.LedgerEntry, error) {
	query := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE account_id = $1 ORDER BY seq DESC` + limitClause(limit)
	entries, err := queryAll(ctx, s.db, scanEntry, query, accountID)
	return entries, wrap(err, "listing ledger entries")
}

// EntriesAfter pages by seq, the order Entries lists in.
func (s *Store) EntriesAfter(ctx context.Context, accountID, after string, limit int) ([]storage.LedgerEntry, error) {
	var seq int64
	err := s.db.QueryRow(ctx, `SELECT seq FROM ledger_entries WHERE id = $1 AND account_id = $2`, after, accountID).Scan(&seq)
	if noRows(err) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, wrap(err, "finding a ledger cursor")
	}
	query := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE account_id = $1 AND seq < $2 ORDER BY seq DESC` + limitClause(limit)
	entries, err := queryAll(ctx, s.db, scanEntry, query, accountID, seq)
	return entries, wrap(err, "listing ledger entries")
}

func scanEntry(r Row) (storage.LedgerEntry, error) {
	var e storage.LedgerEntry
	var kind string
	var created int64
	if err := r.Scan(&e.ID, &e.AccountID, &e.AmountCents, &e.BalanceAfterCents, &kind, &e.Reference, &e.Note, &created); err != nil {
		return storage.LedgerEntry{}, err
	}
	e.Kind = storage.EntryKind(kind)
	e.CreatedAt = fromMicros(created)
	return e, nil
}
