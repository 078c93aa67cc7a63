package storage

import (
	"context"
	"time"
)

// AuditLog keeps the record of administrative actions: who did what to
// which account, when, from where, and how it ended. Entries are only
// ever appended.
type AuditLog interface {
	// AppendAudit stores e with a fresh ID and, when e.At is zero, the
	// store's clock as At, and returns it as stored.
	AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// AuditEntries lists entries newest first, as q selects them.
	AuditEntries(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
}

// AuditEntry is one administrative action, allowed or refused.
type AuditEntry struct {
	// ID orders entries: it starts with the time in fixed-width hex, so
	// a later entry of one node has a greater id.
	ID string
	At time.Time
	// Subject is the token's sub claim; "" when a refused token had none.
	Subject string
	// Role is "operator" or "account".
	Role string
	// Action names what was attempted, such as "key.create".
	Action string
	// Account is the name of the account acted on; "" for actions on no
	// one account.
	Account string
	// Target is the object acted on within the account, such as a key or
	// file id; "" when the action is on the account itself.
	Target string
	// RemoteIP is the client address the request came from.
	RemoteIP string
	// Outcome is "ok", or the error code the caller was answered with.
	Outcome string
	// Detail is a short, secret-free note (an amount, a label).
	Detail string
}

// AuditQuery selects audit entries.
type AuditQuery struct {
	// Account, when not empty, keeps only entries on that account name.
	Account string
	// Before, when not empty, keeps only entries older than the entry
	// with this id (a page cursor); it need not name an existing entry.
	Before string
	// Limit is the most entries returned; all of them if <= 0.
	Limit int
}

// AccountBalance is an account with its balance, as listings show it.
type AccountBalance struct {
	Account
	BalanceCents int64
}
