package storage

import (
	"context"
	"time"
)

// PaymentReferencePrefix starts the ledger reference of every entry a
// payment provider caused (a paid top-up, a refund, a lost dispute):
// "pay:" + provider + ":" + the provider's object id. Such entries are
// an account's receipts. Only the payment handlers write them; a top-up
// reference given by an operator may not start with it.
const PaymentReferencePrefix = "pay:"

// Payments records what payment providers told the gateway.
type Payments interface {
	// RecordPaymentEvent takes one provider event in one transaction: it
	// records the event under (Provider, EventID) and, the first time
	// only, records ev.Payment and posts ev.Entries to ev.AccountID's
	// ledger, each entry idempotent on its own reference as Post is. A
	// redelivered event (an EventID already recorded) changes nothing
	// and reports Duplicate; another event about the same provider
	// object (the same references) posts nothing again. Entries may
	// overdraw: a refund is owed whatever the balance. ErrNotFound if
	// ev.Entries is not empty and the account never existed.
	RecordPaymentEvent(ctx context.Context, ev PaymentEvent) (PaymentResult, error)
	// PaymentByID returns the payment a provider's payment id credited,
	// or ErrNotFound.
	PaymentByID(ctx context.Context, provider, paymentID string) (Payment, error)
	// Receipts lists up to limit ledger entries of an account that a
	// payment provider caused (references starting with
	// PaymentReferencePrefix), newest first; all of them if limit <= 0.
	Receipts(ctx context.Context, accountID string, limit int) ([]LedgerEntry, error)
	// ReceiptsAfter lists up to limit receipts older than the receipt
	// after, in Receipts' order; ErrNotFound when after is not one of the
	// account's receipts.
	ReceiptsAfter(ctx context.Context, accountID, after string, limit int) ([]LedgerEntry, error)
}

// PaymentEvent is one event of a payment provider, as the gateway acts
// on it.
type PaymentEvent struct {
	Provider string // "stripe", "generic"
	EventID  string // the provider's event id, unique per provider
	Type     string // the provider's event type
	// AccountID is the account the event is about; "" when it names none
	// of ours (an event recorded and ignored).
	AccountID string
	// Payment, when set, is recorded as the payment the event confirms,
	// unless one with its id is already recorded.
	Payment *Payment
	// Entries are posted to AccountID's ledger. Each Reference starts
	// with PaymentReferencePrefix.
	Entries []Entry
	// Outcome is recorded with the event when Entries is empty
	// ("ignored"); otherwise the store records what posting did.
	Outcome string
}

// PaymentResult is what RecordPaymentEvent did.
type PaymentResult struct {
	// Duplicate: the event was recorded before; nothing changed.
	Duplicate bool
	// Posted are the entries this event posted; Existing those of its
	// entries that another event had posted already.
	Posted, Existing []LedgerEntry
	// Outcome is what was recorded: "credited", "debited",
	// "already_applied", or PaymentEvent.Outcome.
	Outcome string
}

// Payment is a provider's payment that credited an account.
type Payment struct {
	Provider    string
	PaymentID   string
	AccountID   string
	AmountCents int64
	CreatedAt   time.Time
}
