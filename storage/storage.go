// Package storage defines what Switchyard keeps durably, as persisted
// record types and the interfaces of the stores that keep them: accounts,
// API keys, the balance ledger, usage records, file metadata, object id
// counters and end users' memory. It imports nothing of Switchyard's
// domain packages; they all import it. The SQL implementation is
// storage/sqlstore, opened by storage/sqlite (the embedded default) and
// storage/postgres (the distributed mode); both pass the contract suites
// in storage/storagetest and files/filestest. File bytes live in a blob
// store (storage/blob).
//
// Money is always an integer number of cents. Balances are never a bare
// mutable number: every change is a ledger entry that records the balance
// after it, and the account's balance is the balance after its last entry.
package storage

import (
	"context"
	"errors"
	"time"
)

// Store is the whole durable state. Implementations are safe for concurrent
// use by many goroutines and by many processes sharing the same database.
type Store interface {
	Accounts
	Keys
	Ledger
	Usage
	UsageReports
	RequestLog
	FileMeta
	ObjectIDs
	Memory
	AuditLog
	Payments
	Alerts
	// Close releases the store's connections and stops its goroutines.
	Close() error
}

// Accounts are the owners of keys and balances.
type Accounts interface {
	// EnsureAccount returns the live account with this name, creating it
	// with a zero balance if there is none.
	EnsureAccount(ctx context.Context, name string) (Account, error)
	// AccountByName returns the live account with this name, or ErrNotFound.
	AccountByName(ctx context.Context, name string) (Account, error)
	// DeleteAccount marks the account deleted and revokes all its keys in
	// the same transaction. Its ledger is kept. ErrNotFound if there is no
	// live account with this id.
	DeleteAccount(ctx context.Context, id string) error
	// CountAccounts counts live accounts.
	CountAccounts(ctx context.Context) (int, error)
	// ListAccounts lists up to limit live accounts with their balances,
	// by name, starting after the name after ("" from the first); all of
	// them if limit <= 0.
	ListAccounts(ctx context.Context, after string, limit int) ([]AccountBalance, error)
	// SetAccountDisabled disables (disabled true) or enables a live
	// account and returns it. Disabling raises the key generation in the
	// same transaction, as a revocation does, so that every node refuses
	// the account's keys on their next request; its keys, balance and
	// ledger are kept, and enabling makes the keys usable again. Doing
	// what is already done changes nothing. ErrNotFound if there is no
	// live account with this id.
	SetAccountDisabled(ctx context.Context, id string, disabled bool) (Account, error)
}

// Keys are the hashed sk- API keys.
type Keys interface {
	// CreateKey stores a new key for an existing account. It enforces
	// NewKey's limits atomically against concurrent creations in any
	// process: ErrMaxKeys when MaxActive keys are already active, and
	// ErrKeyCreationRate when MaxPerWindow keys were created within Window
	// (revoked keys count: the limit is on creations). ErrNotFound if there
	// is no live account with this id, ErrAccountDisabled if it is
	// disabled.
	CreateKey(ctx context.Context, k NewKey) (APIKey, error)
	// ListKeys lists an account's keys, active and revoked, newest first.
	// An unknown account has none.
	ListKeys(ctx context.Context, accountID string) ([]APIKey, error)
	// RevokeKey revokes a key by id and returns it. Revoking a revoked key
	// returns it unchanged. ErrNotFound for an unknown id.
	RevokeKey(ctx context.Context, keyID string) (APIKey, error)
	// LookupKey finds an active key of a live, enabled account by its
	// hash. Unknown and revoked keys, and keys of deleted or disabled
	// accounts, give ErrNotFound.
	LookupKey(ctx context.Context, hash string) (KeyOwner, error)
	// KeyState is the account's balance (as Balance) and the store's key
	// generation (as KeyOwner.KeyGeneration), read together in one
	// statement, so that a node holding a cached lookup learns in the
	// read it makes anyway whether any key was revoked since.
	// ErrNotFound if the account never existed.
	KeyState(ctx context.Context, accountID string) (balanceCents, generation int64, err error)
	// Revision names the committed state of the whole store, read without
	// a query, or reports false where the store cannot tell. Two equal
	// revisions mean that nothing was committed in between, by this
	// process or any other, so that a KeyState read under the first is
	// still exact under the second. SQLite tells at once; PostgreSQL
	// learns of other processes' commits by notification, so there two
	// equal revisions mean nothing committed up to the notifications'
	// delay before the second (well under a millisecond, at most 250 ms).
	Revision() (rev Revision, ok bool)
	KeyControlStore
}

// Revision is an opaque name of a store's committed state (Keys.Revision).
type Revision struct{ hi, lo uint64 }

// NewRevision makes a Revision of two words that together change on every
// commit. It is for store implementations.
func NewRevision(hi, lo uint64) Revision { return Revision{hi, lo} }

// Ledger is the append-only record of balance changes.
type Ledger interface {
	// Post appends an entry and returns it with its ID, BalanceAfter and
	// CreatedAt filled in. Reference is an idempotency key unique per
	// account and kind: posting a reference that already exists for the
	// entry's kind changes nothing and returns the existing entry together
	// with ErrDuplicateReference. Each kind has references of its own, so
	// that no top-up, whatever its reference, is ever taken for a
	// request's charge (ChargeReferencePrefix).
	// Post does not refuse to overdraw: whether a debit is allowed is the
	// caller's decision, made before it posts. Entries may be posted to
	// deleted accounts, so that charges in flight at deletion settle;
	// ErrNotFound if the account never existed.
	Post(ctx context.Context, e Entry) (LedgerEntry, error)
	// Balance is the account's balance in cents (0 for an empty ledger).
	// ErrNotFound if the account never existed.
	Balance(ctx context.Context, accountID string) (int64, error)
	// Entries lists up to limit entries of an account, newest first; all
	// of them if limit <= 0. An unknown account has none.
	Entries(ctx context.Context, accountID string, limit int) ([]LedgerEntry, error)
	// EntriesAfter lists up to limit entries of an account older than the
	// entry with id after, newest first: the next page of a listing whose
	// last entry was after. ErrNotFound when after names no entry of the
	// account, since ledger ids are not ordered across nodes' clocks and
	// a cursor has to be an entry's own position.
	EntriesAfter(ctx context.Context, accountID, after string, limit int) ([]LedgerEntry, error)
}

// Account is an owner of keys and a balance.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
	// DisabledAt is when an operator disabled the account; zero while it
	// is enabled. A disabled account's keys are refused.
	DisabledAt time.Time
}

// Disabled reports whether the account is disabled.
func (a Account) Disabled() bool { return !a.DisabledAt.IsZero() }

// NewKey is a key to create. Hash and Hint are computed by the caller; the
// store never sees the key itself.
type NewKey struct {
	AccountID string
	Hash      string // hex HMAC-SHA256 of the full key
	Hint      string // display form such as "sk-...a1B2"
	Label     string
	// Limits enforced atomically with the insert. Zero means no limit.
	MaxActive    int
	MaxPerWindow int
	Window       time.Duration
	// Controls are the key's own limits.
	Controls KeyControls
}

// APIKey is a stored key, without its secret.
type APIKey struct {
	ID        string
	AccountID string
	Hint      string
	Label     string
	CreatedAt time.Time
	RevokedAt time.Time // zero while active
	Controls  KeyControls
	// LastUsedAt is when a charge of the key was last committed; zero
	// if never. It is written with the charges, in their batch, not per
	// request, so it trails the key's last request by up to the ledger
	// writer's flush interval.
	LastUsedAt time.Time
}

// Active reports whether the key has not been revoked.
func (k APIKey) Active() bool { return k.RevokedAt.IsZero() }

// KeyOwner is what authentication learns from a key lookup.
type KeyOwner struct {
	KeyID       string
	KeyHash     string
	KeyHint     string
	AccountID   string
	AccountName string
	// BalanceCents is the account's balance when the key was looked up,
	// read in the same query so that the balance gate costs no second
	// round trip.
	BalanceCents int64
	// KeyGeneration is the store's key generation in the same read: a
	// number that every revocation (RevokeKey, DeleteAccount), in any
	// process, raises in its own transaction, as does disabling an
	// account. A lookup is still good while the generation has not
	// moved.
	KeyGeneration int64
	// Controls are the key's own limits.
	Controls KeyControls
	// PeriodSpendCents is what the key's committed charges add up to in
	// its spend period at the lookup, when it has a spend limit (0
	// otherwise).
	PeriodSpendCents int64
	// Period names the spend period PeriodSpendCents counts
	// (SpendPeriod.Name at the lookup); "" without a spend limit.
	Period string
}

// Entry is a ledger entry to post.
type Entry struct {
	AccountID   string
	AmountCents int64     // positive credits, negative debits
	Kind        EntryKind // what caused it
	Reference   string    // idempotency key, unique per account and Kind; required
	Note        string
}

// EntryKind says what caused a ledger entry.
type EntryKind string

const (
	EntryTopUp      EntryKind = "topup"
	EntryCharge     EntryKind = "charge"
	EntryRefund     EntryKind = "refund"
	EntryAdjustment EntryKind = "adjustment"
)

// LedgerEntry is a posted ledger entry.
type LedgerEntry struct {
	ID                string
	AccountID         string
	AmountCents       int64
	BalanceAfterCents int64
	Kind              EntryKind
	Reference         string
	Note              string
	CreatedAt         time.Time
}

// Options tune a store. The zero value is ready for use.
type Options struct {
	// Now is the store's clock, for creation times and key-creation
	// windows. Default: time.Now.
	Now func() time.Time
}

// Clock returns o.Now, or time.Now when it is nil.
func (o Options) Clock() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

var (
	ErrNotFound           = errors.New("storage: not found")
	ErrMaxKeys            = errors.New("storage: maximum number of active keys reached")
	ErrKeyCreationRate    = errors.New("storage: too many keys created recently")
	ErrDuplicateReference = errors.New("storage: ledger reference already posted")
	ErrTooManyFiles       = errors.New("storage: stored file limit reached")
	ErrTooManyBytes       = errors.New("storage: stored bytes limit reached")
	ErrAccountDisabled    = errors.New("storage: account is disabled")
	ErrObjectRetired      = errors.New("storage: object was deleted or renamed")
)
