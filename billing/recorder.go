package billing

import (
	"context"
	"fmt"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// Recorder prices what a request consumed with policy.Profile.Price and
// has Store record and charge it. It is what the orchestrator and the /v1
// meter hand their usage records to. It is safe for concurrent use; the
// zero value has no Store and must not be used.
type Recorder struct {
	// Store records usage and keeps the ledger. Required.
	Store storage.Usage
	// Profile holds the prices (per model, see policy.Profile.ForModel),
	// minimum charge and cap of the active revision. The zero Profile
	// prices everything at 0 cents.
	Profile policy.Profile
}

// RecordUsage charges rec's account for the request and returns the amount
// charged in cents. rec.CostCents is ignored: the price is the Profile's
// for rec.Model (policy.Profile.ForModel).
// Recording a request id again charges nothing more and returns what the
// first record was charged.
func (r *Recorder) RecordUsage(ctx context.Context, rec storage.UsageRecord) (int64, error) {
	rec.CostCents = r.Profile.ForModel(rec.Model).Price(rec.PromptTokens, rec.CompletionTokens)
	stored, err := r.Store.SettleUsage(ctx, rec)
	if err != nil {
		return 0, fmt.Errorf("billing: recording usage of request %s: %w", rec.RequestID, err)
	}
	return stored.CostCents, nil
}
