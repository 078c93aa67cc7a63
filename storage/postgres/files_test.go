package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/files/filestest"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
)

var _ storage.FileMeta = (*postgres.Store)(nil)

func TestFilesContract(t *testing.T) {
	filestest.Run(t, func(t *testing.T) storage.FileMeta {
		s, err := postgres.Open(t.Context(), testenv.Postgres(t), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// File ids are paged through in id order, which must be byte order
// whatever the database's locale. The test server's locale may well be C
// already, so the contract suite alone cannot tell; the column can.
func TestFileIDsCompareBytewise(t *testing.T) {
	dsn := testenv.Postgres(t)
	s, err := postgres.Open(t.Context(), dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var collation string
	err = conn.QueryRow(t.Context(), `SELECT COALESCE(collation_name, '') FROM information_schema.columns
		WHERE table_name = 'files' AND column_name = 'id'`).Scan(&collation)
	if err != nil {
		t.Fatal(err)
	}
	if collation != "C" {
		t.Errorf("files.id collation = %q, want C", collation)
	}
}
