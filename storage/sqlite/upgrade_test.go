package sqlite

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/storage/sqlstore"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

func TestUpgrades(t *testing.T) {
	path := storagetest.DatabasePerTest(func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "switchyard.db")
	})
	storagetest.RunUpgrades(t, storagetest.OpenWith(path, Open), func(t *testing.T) sqlstore.Driver {
		p := path(t)
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		db, err := sql.Open("sqlite", dsn(p))
		if err != nil {
			t.Fatal(err)
		}
		return &driver{db: db, querier: querier{q: db}, writer: make(chan struct{}, 1), park: parkUnhurried}
	})
}
