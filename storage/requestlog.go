package storage

import (
	"context"
	"time"
)

// RequestLog keeps one row per authenticated request: what it asked, who
// answered, how it ended and what it cost. The ledger writer appends the
// rows in batches, off the path the client waits for; they are for
// people looking at traffic, not for money, which stays in the ledger
// and the usage records.
type RequestLog interface {
	// AppendRequestLog stores entries in one transaction, giving each
	// its ID (which sorts as the entries' At). An entry whose account
	// does not exist is stored all the same: the log is no ledger.
	// entries is the caller's again once it returns: the ledger writer
	// queues the next entries in the same array.
	AppendRequestLog(ctx context.Context, entries []RequestLogEntry) error
	// RequestLogPage lists an account's entries that q selects, newest
	// first, up to q.Limit of them (all of them if q.Limit <= 0).
	RequestLogPage(ctx context.Context, accountID string, q RequestLogQuery) ([]RequestLogEntry, error)
	// PruneRequestLog deletes up to limit entries, of any account, that
	// are older than before, and returns how many it deleted; every one
	// of them if limit <= 0.
	PruneRequestLog(ctx context.Context, before time.Time, limit int) (int64, error)
}

// LoggedSettler settles charges and appends request log entries in one
// transaction, so that a batch of the ledger writer costs the database
// one commit rather than two. *sqlstore.Store implements it, and so
// every Store this module opens.
type LoggedSettler interface {
	// SettleUsageBatchLogged settles records exactly as
	// Usage.SettleUsageBatch does and, in the same transaction, after
	// them, appends entries as RequestLog.AppendRequestLog does. Charges
	// come first: entries the database refuses are rolled back alone
	// (the charges still commit) and logErr says why. err is for the
	// transaction as a whole, as SettleUsageBatch's: then neither charges
	// nor entries were written and no Settlement is returned. Neither
	// records nor entries are kept once it returns.
	SettleUsageBatchLogged(ctx context.Context, records []UsageRecord, entries []RequestLogEntry) (settled []Settlement, logErr, err error)
}

// RequestLogEntry is one request as the request log keeps it.
type RequestLogEntry struct {
	// ID is the store's id of the entry, unique, sorting as At does; the
	// cursor of RequestLogQuery.Before. AppendRequestLog sets it.
	ID        string
	AccountID string
	KeyID     string
	// At is when the gateway received the request.
	At time.Time
	// RequestID is the X-Request-Id the client sent or the gateway gave.
	RequestID string
	// ChargeID is the request id of its usage record and the reference
	// of its charge ("" for a request that was not charged).
	ChargeID string
	EndUser  string
	// Route is the API the request went to: v1, v3_chat, v3_files or
	// other, as the metrics label it.
	Route  string
	Method string
	Path   string
	// ModelAsked is the model string the body named; ModelServed the
	// model that answered and was billed (a fallback, say).
	ModelAsked  string
	ModelServed string
	Upstream    string
	Stream      bool
	Status      int
	// ErrorCode is the code of the gateway's error envelope; "" when it
	// answered none.
	ErrorCode        string
	PromptTokens     int64
	CompletionTokens int64
	CostCents        int64
	Estimated        bool
	ToolCalls        int
	// Latency is the time from receipt to the response's end; FirstByte
	// the time to the first byte of its body, zero when it had none.
	Latency   time.Duration
	FirstByte time.Duration
}

// RequestLogQuery selects entries of RequestLog.RequestLogPage. The
// zero value of a field selects everything.
type RequestLogQuery struct {
	KeyID   string
	EndUser string
	// Model matches the model asked for or the one that answered.
	Model string
	// Status selects one status code; StatusClass (1 to 5) the codes of
	// one hundred, 4 for every client error, say.
	Status      int
	StatusClass int
	// Since and Until bound At to [Since, Until).
	Since, Until time.Time
	// Before is the ID of the last entry of the previous page; the
	// page starts with the next older entry.
	Before string
	Limit  int
}
