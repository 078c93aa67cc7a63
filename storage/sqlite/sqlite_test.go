package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

var databasePath = storagetest.DatabasePerTest(func(t *testing.T) string {
	return filepath.Join(t.TempDir(), "data", "switchyard.db")
})

var open = storagetest.OpenWith(databasePath, sqlite.Open)

func TestContract(t *testing.T) {
	storagetest.Run(t, open)
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "switchyard.db")
	s, err := sqlite.Open(t.Context(), path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.EnsureAccount(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want os.FileMode
	}{
		{"directory", filepath.Dir(path), 0o700 | os.ModeDir},
		{"database", path, 0o600},
		{"write-ahead log", path + "-wal", 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi, err := os.Stat(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tt.want {
				t.Errorf("mode %v, want %v", fi.Mode(), tt.want)
			}
		})
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), "", storage.Options{}); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}
