package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/files/filestest"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

func TestFilesContract(t *testing.T) {
	filestest.Run(t, func(t *testing.T) storage.FileMeta {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "switchyard.db"), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
