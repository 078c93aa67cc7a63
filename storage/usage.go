package storage

import (
	"context"
	"time"
)

// ChargeReferencePrefix starts the ledger reference of a request's
// charge; the request id follows. Only entries of kind EntryCharge are
// read as charges: references are unique per kind (Ledger.Post).
const ChargeReferencePrefix = "req:"

// Usage keeps usage records and charges them to the ledger, once per
// request id.
type Usage interface {
	// SettleUsage writes the usage record u and debits u.CostCents from
	// the account's ledger, as a charge with reference
	// ChargeReferencePrefix + u.RequestID, in one transaction. It returns
	// the record as stored.
	//
	// Recording a request id again changes nothing and returns the
	// record already stored, with its cost, so that a retried record
	// never charges twice. Like Post, SettleUsage accepts deleted
	// accounts, so that requests in flight when the account was deleted
	// still settle, and does not refuse to overdraw. ErrNotFound if the
	// account never existed.
	SettleUsage(ctx context.Context, u UsageRecord) (UsageRecord, error)
	// SettleUsageBatch settles records in one transaction, in their
	// order, each exactly as SettleUsage would settle it on its own: its
	// own charge reference and idempotency, its own answer. It returns
	// one Settlement per record, in the same order. A record that cannot
	// be settled (no request id, a negative cost, an account that never
	// existed, a value the database refuses) gets its error in its
	// Settlement, writes nothing, and does not keep the others from
	// settling. The error is for the batch as a whole (the transaction
	// failed, ctx ended): then nothing was written, no Settlement is
	// returned, and the batch may be retried as it is, since settling a
	// record twice charges it once. records is the caller's again once
	// it returns: the ledger writer fills the same array for its next
	// batch.
	SettleUsageBatch(ctx context.Context, records []UsageRecord) ([]Settlement, error)
	// UsageRecords lists up to limit usage records of an account, the
	// latest finished first; all of them if limit <= 0. An unknown
	// account has none.
	UsageRecords(ctx context.Context, accountID string, limit int) ([]UsageRecord, error)
}

// Settlement is how one record of SettleUsageBatch was settled.
type Settlement struct {
	// Record is the record as stored, as SettleUsage returns it: for a
	// request id settled before, the first record and its cost. Zero
	// when Err is set.
	Record UsageRecord
	// Err is why this record was not settled; nil when it was.
	Err error
}

// UsageRecord is what one request consumed and was charged.
type UsageRecord struct {
	AccountID string
	KeyID     string
	// RequestID is unique per account and the record's idempotency key.
	RequestID string
	EndUser   string // X-User-Id or body user; "" when the request named none
	SessionID string // X-Session-Id; "" when the request named none
	// Model is the model that answered: the request's model string, or
	// the configured fallback that served it. Its prices apply.
	Model string
	// Upstream names the backend that answered, when the model is served
	// by a pool of several; empty otherwise.
	Upstream string
	Stream   bool

	// PromptTokens and CompletionTokens are the billed totals (spec 2.5),
	// summed over all rounds of a /v3 tool loop. PromptTokens includes
	// the service's own context; CompletionTokens includes reasoning and
	// tool-call arguments.
	PromptTokens     int64
	CompletionTokens int64
	// AnswerTokens is the share of CompletionTokens that was visible
	// answer text.
	AnswerTokens int64
	// Estimated is true when the backend did not report usage for some
	// round (or the round broke off) and the counts were estimated from
	// the text.
	Estimated bool

	Rounds    int // upstream calls made
	ToolCalls int // tool calls run
	Outcome   Outcome
	Started   time.Time
	Finished  time.Time

	// CostCents is the charge for the request, computed by the caller
	// from its prices. It must not be negative.
	CostCents int64
	// RecordedAt is when the record was written. SettleUsage sets it.
	RecordedAt time.Time
}

// Outcome is how a request ended.
type Outcome string

const (
	OutcomeCompleted      Outcome = "completed"
	OutcomeClientGone     Outcome = "client_gone"     // the client disconnected
	OutcomeUpstreamFailed Outcome = "upstream_failed" // the backend failed or timed out
	OutcomeFailed         Outcome = "failed"          // another server-side failure
)

// UsageReports summarises what an account consumed and paid, for
// reports. *sqlstore.Store implements it, and so every Store this
// module opens.
type UsageReports interface {
	// UsageSummary totals an account's usage records that finished in
	// [q.Since, q.Until), one row per group of q.By, in the order
	// UsageGrouping documents. An unknown account, or one without records
	// in the period, has no rows and no error.
	UsageSummary(ctx context.Context, accountID string, q UsageQuery) ([]UsageRow, error)
	// Charges lists up to limit ledger entries of kind EntryCharge of an
	// account, newest first; all of them if limit <= 0. An unknown
	// account has none.
	Charges(ctx context.Context, accountID string, limit int) ([]LedgerEntry, error)
}

// UsageQuery selects and groups the usage records UsageSummary totals.
type UsageQuery struct {
	// Since is the earliest finish time included; the zero time sets no
	// lower bound.
	Since time.Time
	// Until is the first finish time no longer included; the zero time
	// sets no upper bound.
	Until time.Time
	// By is the grouping. Required.
	By UsageGrouping
}

// UsageGrouping is how UsageSummary groups records.
type UsageGrouping string

const (
	// UsageByDay groups by the UTC calendar day of the record's finish
	// time; the rows come oldest day first.
	UsageByDay UsageGrouping = "day"
	// UsageByKey groups by the API key that made the request; the rows
	// come most charged first, ties by key id.
	UsageByKey UsageGrouping = "key"
	// UsageByEndUser groups by the end user the request named ("" for
	// requests that named none); the rows come most charged first, ties
	// by end user.
	UsageByEndUser UsageGrouping = "user"
	// UsageByModel groups by the model that answered; the rows come
	// most charged first, ties by model.
	UsageByModel UsageGrouping = "model"
)

// UsageRow is the total of one group of usage records.
type UsageRow struct {
	// Group is what the row totals: the day as YYYY-MM-DD for
	// UsageByDay, the key id for UsageByKey, the end user for
	// UsageByEndUser, the model for UsageByModel.
	Group string
	// KeyHint is the display form of the key ("sk-...a1B2") for
	// UsageByKey, "" otherwise and for keys the store no longer knows.
	KeyHint string

	Requests         int64
	PromptTokens     int64
	CompletionTokens int64
	CostCents        int64
	// EstimatedRequests counts the requests whose token counts were
	// estimated (UsageRecord.Estimated).
	EstimatedRequests int64
}

// EstimatedShare is the fraction of the row's requests whose counts
// were estimated, from 0 to 1; 0 for a row without requests.
func (r UsageRow) EstimatedShare() float64 {
	if r.Requests <= 0 {
		return 0
	}
	return float64(r.EstimatedRequests) / float64(r.Requests)
}
