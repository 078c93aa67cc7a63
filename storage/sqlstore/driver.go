package sqlstore

import (
	"context"

	"github.com/switchyardhq/switchyard/storage"
)

// Driver is the little a Store needs from a database. The sqlite and
// postgres packages implement it; the SQL itself lives in this package and
// is written once, with $1-style placeholders, in the subset both speak.
type Driver interface {
	Querier
	// Begin starts a read-committed (or stronger) transaction meant for
	// writing. On SQLite it must take the write lock at once (BEGIN
	// IMMEDIATE), so that two writers never both read before either writes.
	Begin(ctx context.Context) (Tx, error)
	// Dialect describes the few places where the databases differ.
	Dialect() Dialect
	// IsUniqueViolation reports whether err is a unique-constraint violation.
	IsUniqueViolation(err error) bool
	// Close releases every connection; closing again does nothing.
	Close() error
}

// Dialect is what differs between the SQL databases a Store runs on.
type Dialect struct {
	// Name identifies the database, e.g. "sqlite" or "postgres".
	Name string
	// ForUpdate is appended to a SELECT of one row that the transaction is
	// about to change, to lock it against other writers (" FOR UPDATE").
	// Empty where Begin already serialises writers (SQLite).
	ForUpdate string
	// MigrationLock is run first in the migration transaction so that
	// processes starting together migrate one after the other. Empty where
	// Begin already serialises writers.
	MigrationLock string
	// BytewiseCollation is the clause that makes a TEXT column compare
	// bytewise, put where a migration writes /*bytewise*/. Empty where
	// the default collation already does (SQLite's BINARY).
	BytewiseCollation string
	// PositionalParams makes the multi-row INSERTs of a settlement batch
	// use ? rather than $1, $2, ...: SQLite binds a numbered parameter by
	// looking its name up in a list it walks from the start, so binding
	// the thousand parameters of a large INSERT took longer than running
	// it. Only the few values its rows share are numbered (?1, ?2, ...;
	// see insertRows).
	PositionalParams bool
	// Revision, if not nil, names the database's committed state without
	// a query (storage.Keys.Revision).
	Revision func() (storage.Revision, bool)
}

// Querier runs statements. Placeholders are $1, $2, ...
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	// Without arguments, sql may hold several statements.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// QueryRow's Scan returns an error wrapping database/sql.ErrNoRows
	// when there is no row.
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

// Tx is a transaction.
type Tx interface {
	Querier
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// RowCopier is a Tx that loads many rows into a table in one message,
// as PostgreSQL's COPY does. The ledger writer's batches use it where
// the transaction has it: multi-row INSERTs cost a round trip per 16
// rows and, on PostgreSQL, the server's parse of each statement's
// parameters. A Tx without it gets the INSERTs.
type RowCopier interface {
	// CopyRows inserts rows, each a value per column, into table. A row
	// that breaks a constraint fails them all, as in an INSERT.
	CopyRows(ctx context.Context, table string, columns []string, rows [][]any) (int64, error)
}

// Rows is a result set, as database/sql and pgx both shape it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the single-row result of QueryRow.
type Row interface {
	Scan(dest ...any) error
}
