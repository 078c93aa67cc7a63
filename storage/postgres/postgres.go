// Package postgres opens the distributed store: PostgreSQL through a pgx
// connection pool, shared by every Switchyard node.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

// DefaultApplicationName is the application_name the store's connections
// show in pg_stat_activity unless the DSN sets one.
const DefaultApplicationName = "switchyard"

// migrationLockKey is the pg_advisory_xact_lock key that serialises
// migrations. Advisory locks are per database, so only processes sharing
// the database contend for it. (It spells "swyd-mig" in ASCII.)
const migrationLockKey int64 = 0x73777964_2d6d6967

// Store is a storage.Store on PostgreSQL.
type Store struct {
	*sqlstore.Store
}

// Open connects to the database at dsn (a postgres:// URL or key=value
// string; pool settings such as pool_max_conns are accepted, see
// pgxpool.ParseConfig) and applies pending migrations.
func Open(ctx context.Context, dsn string, opts storage.Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parsing the DSN: %w", err)
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = DefaultApplicationName
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting to %s: %w", where, err)
	}
	feedConfig := cfg.ConnConfig.Copy()
	feedConfig.RuntimeParams["application_name"] = cfg.ConnConfig.RuntimeParams["application_name"] + "-commits"
	d := &driver{pool: pool, feed: newCommitFeed(feedConfig), prepares: preparesStatements(cfg.ConnConfig)}
	inner, err := sqlstore.New(ctx, d, opts)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", where, err)
	}
	return &Store{Store: inner}, nil
}

// Counts of what every PostgreSQL store of this process sent, for the
// metrics (and so the bench) to tell how much SQL a request costs:
// pg_stat_database counts the commit feed's pings as transactions too.
var (
	reads        atomic.Uint64 // queries outside a transaction
	transactions atomic.Uint64 // write transactions
	feedPings    atomic.Uint64 // the commit feed's own statements
)

// Counts reports the queries sent outside transactions, the write
// transactions begun, and the statements the commit feed sent to prove
// its freshness, by every store this process opened.
func Counts() (readQueries, writeTransactions, feedStatements uint64) {
	return reads.Load(), transactions.Load(), feedPings.Load()
}

// driver adapts a pgx pool to sqlstore.Driver.
type driver struct {
	pool     *pgxpool.Pool
	feed     *commitFeed
	prepares bool // the pool's connections keep prepared statements (copyRows)
}

func (d *driver) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := d.pool.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (d *driver) Query(ctx context.Context, sql string, args ...any) (sqlstore.Rows, error) {
	reads.Add(1)
	return d.pool.Query(ctx, sql, args...)
}

func (d *driver) QueryRow(ctx context.Context, sql string, args ...any) sqlstore.Row {
	reads.Add(1)
	return d.pool.QueryRow(ctx, sql, args...)
}

// Begin starts a write transaction whose COMMIT signals the commit feed
// in the same round trip (commitFeed.commitQuery), where the
// notification sent on its own took one more (one of nine for a ledger
// writer's batch of one charge). PostgreSQL delivers it if and only if
// the transaction commits; in a transaction already failed the
// notification fails, the COMMIT does not run, and pgx closes the
// connection. The payload names this process and the commit, so that
// this process's feed counts the commit once, not as it returns and
// again as its notification arrives.
func (d *driver) Begin(ctx context.Context) (sqlstore.Tx, error) {
	commit, seq := d.feed.commitQuery()
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{CommitQuery: commit})
	if err != nil {
		return nil, err
	}
	transactions.Add(1)
	return txn{tx: tx, feed: d.feed, seq: seq, prepares: d.prepares}, nil
}

func (d *driver) Dialect() sqlstore.Dialect {
	return sqlstore.Dialect{
		Name:          "postgres",
		ForUpdate:     " FOR UPDATE",
		MigrationLock: fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrationLockKey),
		// Database locales other than C order ids by their letters'
		// collation, not bytewise, which would break file-list cursors.
		BytewiseCollation: `COLLATE "C"`,
		Revision:          d.feed.revision,
	}
}

func (d *driver) IsUniqueViolation(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

func (d *driver) Close() error {
	d.feed.stop()
	d.pool.Close()
	return nil
}

type txn struct {
	tx       pgx.Tx
	feed     *commitFeed
	seq      uint64 // the commit's number in its notification
	prepares bool   // copyRows's
}

func (t txn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (t txn) Query(ctx context.Context, sql string, args ...any) (sqlstore.Rows, error) {
	return t.tx.Query(ctx, sql, args...)
}

func (t txn) QueryRow(ctx context.Context, sql string, args ...any) sqlstore.Row {
	return t.tx.QueryRow(ctx, sql, args...)
}

// Commit tells every process following the commit feed, this one at
// once, the others by a notification PostgreSQL delivers if and only if
// the transaction commits (driver.Begin). Every write transaction
// signals, whatever it wrote: the few that change nothing a cached key
// depends on cost their followers one read each.
func (t txn) Commit(ctx context.Context) error {
	if err := t.tx.Commit(ctx); err != nil {
		t.feed.forgetOwn(t.seq)
		return err
	}
	t.feed.committedOwn(t.seq)
	return nil
}

func (t txn) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// CopyRows implements sqlstore.RowCopier with COPY: the columns' types
// learnt once per connection, every row sent in one round trip
// (copyRows).
func (t txn) CopyRows(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	return copyRows(ctx, t.tx.Conn(), t.prepares, table, columns, rows)
}

// Interface guards.
var (
	_ storage.Store      = (*Store)(nil)
	_ sqlstore.RowCopier = txn{}
)
