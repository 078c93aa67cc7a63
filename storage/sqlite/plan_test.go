package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

// recorder is a Driver that keeps the reads and deletes the store sends,
// to be asked afterwards how SQLite runs them.
type recorder struct {
	sqlstore.Driver
	mu    sync.Mutex
	stmts []recorded
}

type recorded struct {
	sql  string
	args []any
}

func (r *recorder) note(query string, args []any) {
	if q := strings.TrimSpace(query); strings.HasPrefix(q, "SELECT") || strings.HasPrefix(q, "DELETE") {
		r.mu.Lock()
		r.stmts = append(r.stmts, recorded{query, args})
		r.mu.Unlock()
	}
}

func (r *recorder) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r.note(query, args)
	return r.Driver.Query(ctx, query, args...)
}

func (r *recorder) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	r.note(query, args)
	return r.Driver.QueryRow(ctx, query, args...)
}

func (r *recorder) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	r.note(query, args)
	return r.Driver.Exec(ctx, query, args...)
}

func (r *recorder) Begin(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := r.Driver.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &recordedTx{Tx: tx, r: r}, nil
}

type recordedTx struct {
	sqlstore.Tx
	r *recorder
}

func (t *recordedTx) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	t.r.note(query, args)
	return t.Tx.Query(ctx, query, args...)
}

func (t *recordedTx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	t.r.note(query, args)
	return t.Tx.QueryRow(ctx, query, args...)
}

func (t *recordedTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	t.r.note(query, args)
	return t.Tx.Exec(ctx, query, args...)
}

// The tables every charge writes keep only the indexes their queries
// use, and every query of them still finds its rows through one: none
// reads a whole table.
func TestChargeTablesIndexed(t *testing.T) {
	ctx := t.Context()
	db, r, s := recordedStore(t)
	a, err := s.EnsureAccount(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 100, Kind: storage.EntryTopUp, Reference: "stripe:pi_1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", KeyID: "key_1", CostCents: 1, Finished: now}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SettleUsageBatchLogged(ctx, []storage.UsageRecord{{AccountID: a.ID, RequestID: "r-2", CostCents: 1}},
		[]storage.RequestLogEntry{{AccountID: a.ID, At: now, RequestID: "r-2"}}); err != nil {
		t.Fatal(err)
	}
	es, err := s.Entries(ctx, a.ID, 0)
	if err != nil || len(es) == 0 {
		t.Fatal(es, err)
	}
	r.mu.Lock()
	r.stmts = nil // the reads of the writes above that matter come again below
	r.mu.Unlock()

	// The store's reads of the three tables, each once.
	if _, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-3", CostCents: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 1, Kind: storage.EntryAdjustment, Reference: "adj"}); err != nil {
		t.Fatal(err)
	}
	_, _ = s.EntriesAfter(ctx, a.ID, es[0].ID, 10)
	_, _ = s.Charges(ctx, a.ID, 10)
	_, _ = s.Receipts(ctx, a.ID, 10)
	_, _ = s.ReceiptsAfter(ctx, a.ID, es[0].ID, 10)
	_, _ = s.UsageRecords(ctx, a.ID, 10)
	for _, by := range []storage.UsageGrouping{storage.UsageByDay, storage.UsageByKey, storage.UsageByEndUser, storage.UsageByModel} {
		if _, err := s.UsageSummary(ctx, a.ID, storage.UsageQuery{By: by, Since: now.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = s.RequestLogPage(ctx, a.ID, storage.RequestLogQuery{KeyID: "key_1", Model: "m", StatusClass: 2,
		Since: now.Add(-time.Hour), Until: now, Before: "rq_f", Limit: 10})
	for _, limit := range []int{0, 100} {
		if _, err := s.PruneRequestLog(ctx, now.Add(-time.Hour), limit); err != nil {
			t.Fatal(err)
		}
	}

	charged := []string{"ledger_entries", "usage_records", "request_log"}
	seen := make(map[string]bool)
	for _, st := range r.stmts {
		rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+st.sql, st.args...)
		if err != nil {
			t.Fatalf("EXPLAIN QUERY PLAN %s: %v", st.sql, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			for _, table := range charged {
				seen[table] = seen[table] || strings.Contains(st.sql, table)
			}
			if strings.HasPrefix(step, "SCAN ") && step != "SCAN CONSTANT ROW" {
				t.Errorf("%s\nreads a whole table: %s", st.sql, strings.Join(plan, "; "))
			}
		}
	}
	for _, table := range charged {
		if !seen[table] {
			t.Errorf("no query read %s", table)
		}
	}

	// The B-trees a charge writes: rowid tables beside the indexes of
	// their keys and constraints; the request log's one index is by
	// account, which its pages and its sweep both walk.
	for table, want := range map[string]struct {
		withoutRowID bool
		indexes      int
	}{"ledger_entries": {false, 3}, "usage_records": {false, 2}, "request_log": {false, 1}} {
		var sql string
		var indexes int
		if err := db.QueryRowContext(ctx, `SELECT sql, (SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = $1)
			FROM sqlite_master WHERE type = 'table' AND name = $1`, table).Scan(&sql, &indexes); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(sql, "WITHOUT ROWID") != want.withoutRowID {
			t.Errorf("%s WITHOUT ROWID is %v, want %v: %s", table, !want.withoutRowID, want.withoutRowID, sql)
		}
		if indexes != want.indexes {
			t.Errorf("%s has %d indexes, want %d", table, indexes, want.indexes)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// recordedStore is a store on a new database file whose statements r
// records, and the database under it, closed after the test.
func recordedStore(t *testing.T) (*sql.DB, *recorder, *sqlstore.Store) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "switchyard.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := &recorder{Driver: &driver{db: db, querier: querier{q: db}, writer: make(chan struct{}, 1), park: parkUnhurried}}
	s, err := sqlstore.New(t.Context(), r, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db, r, s
}
