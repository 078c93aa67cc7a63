package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

const usageColumns = `account_id, request_id, key_id, end_user, session_id, model, stream,
	prompt_tokens, completion_tokens, answer_tokens, estimated, rounds, tool_calls, outcome,
	cost_cents, started_at, finished_at, recorded_at, upstream`

// SettleUsage writes the usage record u and debits u.CostCents from the
// account's ledger, as a charge with reference "req:" + u.RequestID, in
// one transaction. It returns the record as stored.
//
// Recording a request id again changes nothing and returns the record
// already stored, with its cost, so that a retried record never charges
// twice. The transaction starts by locking the account's ledger, so of
// concurrent records of one request, in any process, exactly one writes
// and the others find its record. Should the ledger already hold the
// charge without a record, the record is written with that charge and
// nothing is debited again.
//
// Like Post, SettleUsage accepts deleted accounts, so that requests in
// flight when the account was deleted still settle, and does not refuse
// to overdraw. storage.ErrNotFound if the account never existed.
func (s *Store) SettleUsage(ctx context.Context, u storage.UsageRecord) (storage.UsageRecord, error) {
	switch {
	case u.RequestID == "":
		return storage.UsageRecord{}, errors.New("storage: usage record needs a request id")
	case u.CostCents < 0:
		return storage.UsageRecord{}, fmt.Errorf("storage: usage record of request %s has a negative cost", u.RequestID)
	}
	now := s.now()
	u.RecordedAt = fromMicros(micros(now))
	var stored storage.UsageRecord
	err := s.inTx(ctx, func(tx Tx) error {
		head, err := s.lockLedger(ctx, tx, u.AccountID)
		if err != nil {
			return err
		}
		stored, err = usageByRequest(ctx, tx, u.AccountID, u.RequestID)
		if err == nil {
			return nil
		}
		if !noRows(err) {
			return err
		}
		stored = u
		ref := storage.ChargeReferencePrefix + u.RequestID
		charged, err := s.entryByReference(ctx, tx, u.AccountID, ref)
		switch {
		case err == nil:
			stored.CostCents = -charged.AmountCents
		case noRows(err):
			_, err = appendEntry(ctx, tx, head, storage.Entry{
				AccountID:   u.AccountID,
				AmountCents: -u.CostCents,
				Kind:        storage.EntryCharge,
				Reference:   ref,
				Note:        fmt.Sprintf("%s: %d prompt + %d completion tokens", u.Model, u.PromptTokens, u.CompletionTokens),
			}, now)
			if err != nil {
				return err
			}
		default:
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO usage_records (`+usageColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
			stored.AccountID, stored.RequestID, stored.KeyID, stored.EndUser, stored.SessionID, stored.Model, stored.Stream,
			stored.PromptTokens, stored.CompletionTokens, stored.AnswerTokens, stored.Estimated,
			int64(stored.Rounds), int64(stored.ToolCalls), stored.Outcome, stored.CostCents,
			micros(stored.Started), micros(stored.Finished), micros(now), stored.Upstream)
		return err
	})
	if err != nil && s.db.IsUniqueViolation(err) {
		// Only reachable if the ledger lock did not serialise us; the
		// answer is still the record that won.
		if existing, lookupErr := usageByRequest(ctx, s.db, u.AccountID, u.RequestID); lookupErr == nil {
			return existing, nil
		}
	}
	if err != nil {
		return storage.UsageRecord{}, wrap(err, "recording usage")
	}
	return stored, nil
}

// UsageRecords lists up to limit usage records of an account, the latest
// finished first; all of them if limit <= 0. An unknown account has none.
func (s *Store) UsageRecords(ctx context.Context, accountID string, limit int) ([]storage.UsageRecord, error) {
	query := `SELECT ` + usageColumns + ` FROM usage_records WHERE account_id = $1
		ORDER BY finished_at DESC, request_id DESC`
	if limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.Query(ctx, query, accountID)
	if err != nil {
		return nil, wrap(err, "listing usage records")
	}
	defer rows.Close()
	var records []storage.UsageRecord
	for rows.Next() {
		u, err := scanUsage(rows)
		if err != nil {
			return nil, wrap(err, "listing usage records")
		}
		records = append(records, u)
	}
	return records, wrap(rows.Err(), "listing usage records")
}

func usageByRequest(ctx context.Context, q Querier, accountID, requestID string) (storage.UsageRecord, error) {
	return scanUsage(q.QueryRow(ctx, `SELECT `+usageColumns+` FROM usage_records
		WHERE account_id = $1 AND request_id = $2`, accountID, requestID))
}

func scanUsage(r Row) (storage.UsageRecord, error) {
	var u storage.UsageRecord
	var rounds, toolCalls, started, finished, recorded int64
	err := r.Scan(&u.AccountID, &u.RequestID, &u.KeyID, &u.EndUser, &u.SessionID, &u.Model, &u.Stream,
		&u.PromptTokens, &u.CompletionTokens, &u.AnswerTokens, &u.Estimated, &rounds, &toolCalls, &u.Outcome,
		&u.CostCents, &started, &finished, &recorded, &u.Upstream)
	if err != nil {
		return storage.UsageRecord{}, err
	}
	u.Rounds, u.ToolCalls = int(rounds), int(toolCalls)
	u.Started, u.Finished, u.RecordedAt = fromMicros(started), fromMicros(finished), fromMicros(recorded)
	return u, nil
}

var _ storage.UsageReports = (*Store)(nil)

// usageDay is the UTC day number (days since 1970-01-01) of finished_at.
// Both databases truncate integer division towards zero, so times before
// the epoch (the zero time.Time among them) are rounded down by hand.
const usageDay = `CASE WHEN u.finished_at >= 0 THEN u.finished_at / 86400000000
	ELSE (u.finished_at + 1) / 86400000000 - 1 END`

// usageTotals are the aggregates of a summary row, in UsageRow order. The
// casts keep PostgreSQL from widening the sums to NUMERIC.
const usageTotals = `COUNT(*),
	CAST(SUM(u.prompt_tokens) AS BIGINT),
	CAST(SUM(u.completion_tokens) AS BIGINT),
	CAST(SUM(u.cost_cents) AS BIGINT),
	CAST(SUM(CASE WHEN u.estimated THEN 1 ELSE 0 END) AS BIGINT)`

// UsageSummary totals the account's usage records that finished in
// [q.Since, q.Until) with one GROUP BY query, grouped as q.By says.
func (s *Store) UsageSummary(ctx context.Context, accountID string, q storage.UsageQuery) ([]storage.UsageRow, error) {
	var query string
	switch q.By {
	case storage.UsageByDay:
		query = `SELECT ` + usageDay + `, '', ` + usageTotals + `
			FROM usage_records u WHERE ` + usageWindow + `
			GROUP BY ` + usageDay + ` ORDER BY ` + usageDay
	case storage.UsageByKey:
		query = `SELECT u.key_id, COALESCE(k.hint, ''), ` + usageTotals + `
			FROM usage_records u LEFT JOIN api_keys k ON k.id = u.key_id WHERE ` + usageWindow + `
			GROUP BY u.key_id, k.hint ORDER BY SUM(u.cost_cents) DESC, u.key_id`
	case storage.UsageByEndUser:
		query = `SELECT u.end_user, '', ` + usageTotals + `
			FROM usage_records u WHERE ` + usageWindow + `
			GROUP BY u.end_user ORDER BY SUM(u.cost_cents) DESC, u.end_user`
	default:
		return nil, fmt.Errorf("storage: unknown usage grouping %q", q.By)
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.Since.IsZero() {
		since = micros(q.Since)
	}
	if !q.Until.IsZero() {
		until = micros(q.Until)
	}
	rows, err := s.db.Query(ctx, query, accountID, since, until)
	if err != nil {
		return nil, wrap(err, "summarising usage")
	}
	defer rows.Close()
	var out []storage.UsageRow
	for rows.Next() {
		var r storage.UsageRow
		var day int64
		group := any(&r.Group)
		if q.By == storage.UsageByDay {
			group = &day
		}
		if err := rows.Scan(group, &r.KeyHint, &r.Requests, &r.PromptTokens, &r.CompletionTokens,
			&r.CostCents, &r.EstimatedRequests); err != nil {
			return nil, wrap(err, "summarising usage")
		}
		if q.By == storage.UsageByDay {
			r.Group = time.Unix(day*24*60*60, 0).UTC().Format(time.DateOnly)
		}
		out = append(out, r)
	}
	return out, wrap(rows.Err(), "summarising usage")
}

// usageWindow selects the account's records ($1) that finished in
// [$2, $3), which the (account_id, finished_at) index serves.
const usageWindow = `u.account_id = $1 AND u.finished_at >= $2 AND u.finished_at < $3`

// Charges lists the account's newest charges first; limit <= 0 lists all.
func (s *Store) Charges(ctx context.Context, accountID string, limit int) ([]storage.LedgerEntry, error) {
	query := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE account_id = $1 AND kind = $2 ORDER BY seq DESC`
	if limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.Query(ctx, query, accountID, string(storage.EntryCharge))
	if err != nil {
		return nil, wrap(err, "listing charges")
	}
	defer rows.Close()
	var entries []storage.LedgerEntry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, wrap(err, "listing charges")
		}
		entries = append(entries, e)
	}
	return entries, wrap(rows.Err(), "listing charges")
}
