package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// pageSize is the page size of the database at path, read by a
// connection of its own.
func pageSize(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), `PRAGMA page_size`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A new database has pages of 8 KiB, which take the ledger writer's
// commits fewer WAL frames.
func TestNewDatabasePageSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	s, err := sqlite.Open(t.Context(), path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := pageSize(t, path); n != 8192 {
		t.Errorf("page size %d, want 8192", n)
	}
}

// A database made with pages of 4 KiB, as every one before, keeps them:
// SQLite takes a page size only while the file is empty. It opens,
// migrates and charges as any other.
func TestOlderDatabaseKeepsItsPageSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+
		"?_pragma=page_size(4096)&_journal_mode=WAL&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE older (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, a := openWithAccount(t, path, "older")
	now := time.Now()
	if _, err := s.SettleUsage(t.Context(), storage.UsageRecord{
		AccountID: a.ID, RequestID: "r-1", Model: "m", Outcome: storage.OutcomeCompleted,
		CostCents: 3, Started: now, Finished: now,
	}); err != nil {
		t.Fatal(err)
	}
	if bal, err := s.Balance(t.Context(), a.ID); err != nil || bal != -3 {
		t.Errorf("balance %d, %v; want -3", bal, err)
	}
	if n := pageSize(t, path); n != 4096 {
		t.Errorf("page size %d, want 4096 as it was made", n)
	}
}
