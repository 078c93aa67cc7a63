// Package sqlite opens the embedded, single-node store: a SQLite file
// (pure Go, modernc.org/sqlite) in WAL mode.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

// busyTimeoutMillis is how long a statement waits for another connection's
// write lock before failing with SQLITE_BUSY. Write transactions here take
// milliseconds, so only a stuck process makes anyone wait this long.
const busyTimeoutMillis = 10000

// Open opens (creating if needed) the SQLite database at path and applies
// pending migrations. The parent directory is created with mode 0700 and
// the file with mode 0600: it holds key hashes and balances. Several
// processes may open the same file; SQLite's locks serialise their writes.
func Open(ctx context.Context, path string, opts storage.Options) (*sqlstore.Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: creating the database directory: %w", err)
	}
	// Create the file ourselves so that it gets our mode; SQLite gives the
	// -wal and -shm files the mode of the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	f.Close()

	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// Reads run on several connections at once under load; beyond the
	// default two idle ones, each would be opened and closed again.
	db.SetMaxIdleConns(8)
	drv := &driver{db: db, querier: querier{q: db}, writer: make(chan struct{}, 1), park: parkUnhurried}
	for attempt := 1; ; attempt++ {
		s, err := sqlstore.New(ctx, drv, opts)
		if err == nil {
			drv.watchCommits(ctx, abs)
			return s, nil
		}
		// Switching a new database file to WAL needs a lock that SQLite
		// will not wait for (its busy handler could deadlock there), so
		// processes opening a fresh file together may be told SQLITE_BUSY
		// at once. Once one of them has switched, the others can open.
		if !isBusy(err) || attempt == openAttempts || !sleepCtx(ctx, time.Duration(attempt)*20*time.Millisecond) {
			drv.closeWriteConn() // no transaction is open: New returned
			db.Close()
			return nil, fmt.Errorf("sqlite: opening %s: %w", abs, err)
		}
	}
}

const openAttempts = 10

// closeWait is how long Close waits for a write transaction to end.
const closeWait = 5 * time.Second

func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// dsn is a file: URI, so that any character in the path survives, with
// the settings every connection needs. _txlock=immediate makes every
// transaction BEGIN IMMEDIATE: it takes the write lock when it starts, so
// two transactions never both read and then race to write (the store only
// opens transactions to write).
func dsn(path string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMillis))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL") // durable in WAL mode except on power loss
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	// Statement journals, which a multi-row INSERT into a table with
	// constraints needs, stay in memory instead of a temporary file
	// written (and fsynced on close) by every such INSERT.
	q.Add("_pragma", "temp_store(MEMORY)")
	// Pages of 8 KiB rather than SQLite's 4: every page a commit changed
	// is a frame of the WAL, written with two system calls, and copied
	// back to the database at the next checkpoint with two more; the
	// ledger writer's charges fill pages of 8 KiB at two thirds of the
	// frames. BenchmarkWriterBatch: 42% fewer writes and half the reads
	// a charge, 6% less CPU; reads cost the same instructions
	// (BenchmarkKeyRead). SQLite takes the size only while the file is
	// empty: a database made before keeps its pages of 4 KiB, and is
	// only rebuilt by a VACUUM outside WAL mode.
	q.Add("_pragma", "page_size(8192)")
	// Checkpoint the WAL every 5,000 pages (about 40 MB) instead of
	// 1,000: a checkpoint copies each page once however many commits
	// wrote it, and the ledger writer's commits write the same few pages
	// (the ends of the ledger's indexes, the account rows) again and
	// again. BenchmarkSettleUsageBatch: 12-17% less CPU per charge (at
	// 10,000 pages of 4 KiB; a database of 4 KiB pages now checkpoints
	// at 20 MB, which wrote as many pages: the copies are mostly of pages
	// new since the last one).
	q.Add("_pragma", "wal_autocheckpoint(5000)")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// driver adapts database/sql to sqlstore.Driver.
type driver struct {
	db *sql.DB
	querier

	// Reads outside transactions run as statements prepared once:
	// modernc's SQLite otherwise parses the SQL again on every call, which
	// was most of the cost of the key lookup on every request.
	mu    sync.Mutex
	stmts map[string]*sql.Stmt

	writer  chan struct{} // one write transaction of this process at a time
	write   writeConn     // where they run, under writer
	waiting atomic.Int32  // transactions waiting for writer
	park    func()        // how unhurried work lets the network in (yield)

	// wal tells whether anything was committed (Revision); nil where the
	// wal-index could not be opened, and then every read goes to SQLite.
	// pinned is a connection held open for as long as wal is read: while
	// one connection of this process has the wal-index open, no other
	// process may truncate and rebuild it (SQLite's DMS lock), which
	// would start its change counter over.
	wal    *walIndex
	pinned *sql.Conn
}

// watchCommits opens the wal-index of the database at path. A failure
// leaves Revision reporting false: the store still works, without the
// read it saves.
func (d *driver) watchCommits(ctx context.Context, path string) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return
	}
	// A read maps the wal-index for the connection.
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		conn.Close()
		return
	}
	wal, err := openWALIndex(path + "-shm")
	if err != nil {
		conn.Close()
		return
	}
	d.pinned, d.wal = conn, wal
}

func (d *driver) revision() (storage.Revision, bool) {
	if d.wal == nil {
		return storage.Revision{}, false
	}
	return d.wal.revision()
}

func (d *driver) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, ok := d.stmts[query]; ok {
		return st, nil
	}
	st, err := d.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if d.stmts == nil {
		d.stmts = make(map[string]*sql.Stmt)
	}
	d.stmts[query] = st
	return st, nil
}

// Counts of statements run by every SQLite store of this process, for the
// metrics (and so the bench) to tell how much SQL a request costs.
var (
	reads        atomic.Uint64 // queries outside a write transaction
	transactions atomic.Uint64 // write transactions, an Exec outside one included
	txStatements atomic.Uint64 // statements inside write transactions
)

// Counts reports the statements run outside write transactions, the write
// transactions begun and the statements run inside them, by every SQLite
// store this process opened.
func Counts() (readStatements, writeTransactions, transactionStatements uint64) {
	return reads.Load(), transactions.Load(), txStatements.Load()
}

func (d *driver) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	reads.Add(1)
	st, err := d.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// Exec outside a transaction is a write transaction of its own.
func (d *driver) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	transactions.Add(1)
	txStatements.Add(1)
	return d.querier.Exec(ctx, query, args...)
}

func (d *driver) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	reads.Add(1)
	st, err := d.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Begin starts a write transaction. SQLite admits one writer at a time;
// writers of this process take turns on a Go semaphore first, because
// SQLite's own busy handler waits by sleeping in growing steps, which
// under contention costs far more than the writes themselves. Writers in
// other processes (the CLI) are still serialised by SQLite's lock and the
// busy timeout.
func (d *driver) Begin(ctx context.Context) (sqlstore.Tx, error) {
	d.waiting.Add(1)
	select {
	case d.writer <- struct{}{}:
		d.waiting.Add(-1)
	case <-ctx.Done():
		d.waiting.Add(-1)
		return nil, ctx.Err()
	}
	tx, err := d.begin(ctx)
	if err != nil {
		<-d.writer
		return nil, err
	}
	transactions.Add(1)
	return &txn{tx: tx, d: d, querier: querier{q: tx}, done: func() { <-d.writer }}, nil
}

func (d *driver) Dialect() sqlstore.Dialect {
	return sqlstore.Dialect{Name: "sqlite", PositionalParams: true, Revision: d.revision}
}

func (d *driver) IsUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func (d *driver) Close() error {
	d.mu.Lock()
	for _, st := range d.stmts {
		st.Close()
	}
	d.stmts = nil
	d.mu.Unlock()
	// The write connection is closed in its turn; a transaction that
	// does not give its turn back in time is rolled back with the
	// connection when it ends.
	select {
	case d.writer <- struct{}{}:
		d.closeWriteConn()
		<-d.writer
	case <-time.After(closeWait):
	}
	if d.wal != nil {
		d.wal.close()
		d.pinned.Close()
	}
	return d.db.Close()
}

// yield lets other goroutines run before a statement of a write
// transaction. SQLite runs on the calling goroutine and never blocks for
// long: a transaction of many statements, such as the ledger writer's
// batch of charges, would otherwise keep the processor from requests for
// its whole length where the gateway has one CPU.
//
// runtime.Gosched lets the goroutines already runnable go first, but not
// those waiting for their connections: the scheduler polls the network
// only when it finds nothing else to run, and the yielding goroutine is
// on its run queue. Work no client waits for (storage.Unhurried) parks
// instead, on a timer short enough to expire at the next chance to run
// it, so the scheduler polls the network before it comes back: a request
// waits for at most one statement of it. Where nothing else happens the
// park lasts up to the netpoller's millisecond, which delays only that
// work. While another transaction of this process waits for the write
// lock, the work does not park: that would keep the other waiting.
func (d *driver) yield(ctx context.Context) {
	if storage.IsUnhurried(ctx) && d.waiting.Load() == 0 {
		d.park()
		return
	}
	runtime.Gosched()
}

// parkUnhurried parks for longer than a return to the scheduler takes,
// which runs the timers that have expired before anything else.
func parkUnhurried() { time.Sleep(5 * time.Microsecond) }

type txn struct {
	tx *sql.Tx
	d  *driver
	querier
	once sync.Once
	done func() // gives the writer's turn back
}

// Statements with arguments run as the driver's prepared statements bound
// to the transaction, which database/sql keeps prepared per connection.
// Argument-less Exec may hold several statements (migrations) and is run
// as it is, and so is a statement that cannot be prepared outside the
// transaction, such as one on a table the transaction creates.

func (t *txn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	txStatements.Add(1)
	t.d.yield(ctx)
	if len(args) == 0 {
		return t.querier.Exec(ctx, query)
	}
	if n, err := t.d.rawExec(ctx, query, args); !errors.Is(err, errNotRaw) {
		return n, err
	}
	st, err := t.d.stmt(ctx, query)
	if err != nil {
		return t.querier.Exec(ctx, query, args...)
	}
	res, err := t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *txn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	txStatements.Add(1)
	ctx, err := calm(ctx)
	if err != nil {
		return nil, err
	}
	st, err := t.d.stmt(ctx, query)
	if err != nil {
		return t.querier.Query(ctx, query, args...)
	}
	rows, err := t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (t *txn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	txStatements.Add(1)
	ctx, err := calm(ctx)
	if err != nil {
		return errRow{err}
	}
	st, err := t.d.stmt(ctx, query)
	if err != nil {
		return t.querier.QueryRow(ctx, query, args...)
	}
	return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// calm is ctx without its end, or ctx's error if it has ended. The
// statements of a write transaction run under calm contexts: modernc's
// SQLite starts a goroutine for every statement run under a context that
// can end, to interrupt it then, and database/sql another for every
// result set, and those were a sizable part of a small statement's cost.
// The transaction holds the write lock from its BEGIN IMMEDIATE on, so
// its statements wait for no one and run to their end in a moment; each
// still checks ctx before it starts, as it did.
func calm(ctx context.Context) (context.Context, error) {
	if ctx.Done() == nil {
		return ctx, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

func (t *txn) Commit(ctx context.Context) error {
	defer t.once.Do(t.done)
	t.d.yield(ctx) // the commit writes the transaction's pages, a statement's worth of work
	return t.tx.Commit()
}

func (t *txn) Rollback(context.Context) error {
	defer t.once.Do(t.done)
	return t.tx.Rollback()
}

// querier runs statements on a *sql.DB or a *sql.Tx.
type querier struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.q.QueryRowContext(ctx, query, args...)
}

// sqlRows drops the error of Close, which Err already reports.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
