package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

func TestSettleUsageBatchLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	s, err := sqlite.Open(t.Context(), path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refuse := func() {
		// Another connection, as an operator's would be: the store
		// learns of the trigger as SQLite does, from the schema.
		db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(t.Context(), `CREATE TRIGGER IF NOT EXISTS refuse_entry BEFORE INSERT ON request_log
			WHEN NEW.path = '`+storagetest.RefusedLogPath+`' BEGIN SELECT RAISE(ABORT, 'entry refused'); END`); err != nil {
			t.Fatal(err)
		}
	}
	transactions := func() uint64 {
		_, n, _ := sqlite.Counts()
		return n
	}
	storagetest.RunSettleUsageBatchLogged(t, s, refuse, transactions)
}
