package sqlite_test

import (
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

// openWithAccount opens the store at path, closed when tb ends, with the
// account name in it.
func openWithAccount(tb testing.TB, path, name string) (*sqlstore.Store, storage.Account) {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), path, storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	a, err := s.EnsureAccount(tb.Context(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return s, a
}
