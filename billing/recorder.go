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
	// Writer, when set, settles the records of Settle in group commits
	// off the caller's path. Default: nil, Settle writes each record in
	// a transaction of its own before it returns.
	Writer *LedgerWriter
}

// Price is what rec costs at the Profile's prices for rec.Model.
func (r *Recorder) Price(rec storage.UsageRecord) int64 {
	return r.Profile.ForModel(rec.Model).Price(rec.PromptTokens, rec.CompletionTokens)
}

// RecordUsage charges rec's account for the request and returns the amount
// charged in cents, once the charge is committed. rec.CostCents is
// ignored: the price is the Profile's for rec.Model
// (policy.Profile.ForModel). Recording a request id again charges nothing
// more and returns what the first record was charged.
func (r *Recorder) RecordUsage(ctx context.Context, rec storage.UsageRecord) (int64, error) {
	rec.CostCents = r.Price(rec)
	stored, err := r.Store.SettleUsage(ctx, rec)
	if err != nil {
		return 0, recordError(rec.RequestID, err)
	}
	return stored.CostCents, nil
}

// Settle prices rec, hands it to the Writer and returns the price, which
// is what the request is charged: its request id is the server's own
// and new, so no earlier record answers for it. It returns at once
// unless the Writer's queue is full. done is called once, from another
// goroutine, when the charge is committed, with the amount the ledger was
// charged, or when it could not be, with the error; only then may the
// request's hold be released. Without a Writer the record is written
// before Settle returns, and done has been called.
func (r *Recorder) Settle(rec storage.UsageRecord, done func(charged int64, err error)) int64 {
	rec.CostCents = r.Price(rec)
	// The completion keeps the request id alone: a record in it would be
	// moved to the heap, a few hundred bytes a request.
	id := rec.RequestID
	finish := func(stored storage.UsageRecord, err error) { done(settled(id, stored, err)) }
	if r.Writer == nil {
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		defer cancel()
		finish(r.Store.SettleUsage(ctx, rec))
		return rec.CostCents
	}
	r.Writer.Enqueue(rec, finish)
	return rec.CostCents
}

// settled is what a completion of Settle tells of the record of request
// id that the store settled as stored, or not for err.
func settled(id string, stored storage.UsageRecord, err error) (int64, error) {
	if err != nil {
		return 0, recordError(id, err)
	}
	return stored.CostCents, nil
}

func recordError(requestID string, err error) error {
	return fmt.Errorf("billing: recording usage of request %s: %w", requestID, err)
}
