// Package sqlstore implements storage.Store once, in SQL that SQLite and
// PostgreSQL both accept, on top of a small Driver that the sqlite and
// postgres packages provide.
//
// Times are stored as BIGINT microseconds since the Unix epoch (UTC): both
// databases compare and index them the same way and no driver has to agree
// on a time type. Money is BIGINT cents.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// Store is a storage.Store on a SQL database.
type Store struct {
	db      Driver
	dialect Dialect
	now     func() time.Time
	// pruned is where the request log's sweep stopped (PruneRequestLog).
	pruned pruneCursor
}

// New applies pending migrations and returns a Store on d. The Store owns
// d from then on and closes it in Close; if New fails, d is left open for
// the caller to close.
func New(ctx context.Context, d Driver, opts storage.Options) (*Store, error) {
	s := &Store{db: d, dialect: d.Dialect(), now: opts.Clock()}
	if err := migrate(ctx, d, s.now, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the database connections. Closing twice is harmless.
func (s *Store) Close() error { return s.db.Close() }

// inTx runs fn in a write transaction and commits it if fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx Tx) error) error {
	return inTx(ctx, s.db, fn)
}

func inTx(ctx context.Context, db Driver, fn func(tx Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	returned := false
	defer func() {
		if !returned {
			// fn panicked. The caller may recover and go on writing:
			// an open transaction would keep SQLite's one write turn,
			// or a pooled PostgreSQL connection, for ever.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	err = fn(tx)
	returned = true
	if err != nil {
		// Roll back even when ctx is already done, so the connection
		// goes back to its pool clean instead of being discarded.
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// micros is the stored form of a time.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros is the inverse of micros; 0 (how NULL is read back) is the
// zero time.
func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func noRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// wrap adds what was being done to an unexpected database error, and
// passes the storage package's sentinel errors through untouched.
func wrap(err error, doing string) error {
	if err == nil {
		return nil
	}
	for _, sentinel := range []error{storage.ErrNotFound, storage.ErrMaxKeys, storage.ErrKeyCreationRate, storage.ErrDuplicateReference, storage.ErrAccountDisabled} {
		if errors.Is(err, sentinel) {
			return err
		}
	}
	return fmt.Errorf("storage: %s: %w", doing, err)
}

// queryAll runs sql and reads every row with scan. On an error reading
// the rows it returns those read before it.
func queryAll[T any](ctx context.Context, q Querier, scan func(Row) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// limitClause is the LIMIT that ends a listing of at most limit rows;
// limit <= 0 lists all.
func limitClause(limit int) string {
	if limit <= 0 {
		return ""
	}
	return fmt.Sprintf(" LIMIT %d", limit)
}

// Interface guard.
var _ storage.Store = (*Store)(nil)
