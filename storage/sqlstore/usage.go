package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyardhq/switchyard/storage"
)

const usageColumns = `account_id, request_id, key_id, end_user, session_id, model, stream,
	prompt_tokens, completion_tokens, answer_tokens, estimated, rounds, tool_calls, outcome,
	cost_cents, started_at, finished_at, recorded_at`

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
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			stored.AccountID, stored.RequestID, stored.KeyID, stored.EndUser, stored.SessionID, stored.Model, stored.Stream,
			stored.PromptTokens, stored.CompletionTokens, stored.AnswerTokens, stored.Estimated,
			int64(stored.Rounds), int64(stored.ToolCalls), stored.Outcome, stored.CostCents,
			micros(stored.Started), micros(stored.Finished), micros(now))
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
		&u.CostCents, &started, &finished, &recorded)
	if err != nil {
		return storage.UsageRecord{}, err
	}
	u.Rounds, u.ToolCalls = int(rounds), int(toolCalls)
	u.Started, u.Finished, u.RecordedAt = fromMicros(started), fromMicros(finished), fromMicros(recorded)
	return u, nil
}
