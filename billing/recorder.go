package billing

import (
	"context"
	"fmt"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
	"github.com/switchyardhq/switchyard/translator"
)

// The orchestrator declares the UsageRecorder it calls; billing implements
// it, so imports point from billing to translator and never back: the
// translator prices cost_cents on its own when no recorder is set.

// UsageStore keeps usage records and charges them to the ledger, once per
// request id. *sqlstore.Store, and so both the SQLite and the PostgreSQL
// store, is one.
type UsageStore interface {
	// SettleUsage writes u and debits u.CostCents in one transaction, and
	// returns the record as stored: for a request id already recorded,
	// the first record, whose cost is the one charged.
	SettleUsage(ctx context.Context, u sqlstore.UsageRecord) (sqlstore.UsageRecord, error)
}

// Recorder is the orchestrator's translator.UsageRecorder: it prices a
// request with policy.Profile.Price and has Store record and charge it. It is safe for
// concurrent use; the zero value has no Store and must not be used.
type Recorder struct {
	// Store records usage and keeps the ledger. Required.
	Store UsageStore
	// Profile holds the prices, minimum charge and cap of the active
	// revision. The zero Profile prices everything at 0 cents.
	Profile policy.Profile
}

// RecordUsage charges rec's account for the request and returns the amount
// charged in cents. Recording a request id again charges nothing more and
// returns what the first record was charged.
func (r *Recorder) RecordUsage(ctx context.Context, rec translator.UsageRecord) (int64, error) {
	stored, err := r.Store.SettleUsage(ctx, sqlstore.UsageRecord{
		AccountID:        rec.AccountID,
		RequestID:        rec.RequestID,
		KeyID:            rec.KeyID,
		EndUser:          rec.EndUser,
		SessionID:        rec.SessionID,
		Model:            rec.Model,
		Stream:           rec.Stream,
		PromptTokens:     rec.PromptTokens,
		CompletionTokens: rec.CompletionTokens,
		AnswerTokens:     rec.AnswerTokens,
		Estimated:        rec.Estimated,
		Rounds:           rec.Rounds,
		ToolCalls:        rec.ToolCalls,
		Outcome:          string(rec.Outcome),
		Started:          rec.Started,
		Finished:         rec.Finished,
		CostCents:        r.Profile.Price(rec.PromptTokens, rec.CompletionTokens),
	})
	if err != nil {
		return 0, fmt.Errorf("billing: recording usage of request %s: %w", rec.RequestID, err)
	}
	return stored.CostCents, nil
}

// Interface guards.
var (
	_ translator.UsageRecorder = (*Recorder)(nil)
	_ UsageStore               = (*sqlstore.Store)(nil)
)
