package blob_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage/blob"
	"github.com/switchyardhq/switchyard/storage/blob/blobtest"
)

func TestDirContract(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blobtest.Fixture {
		root := t.TempDir()
		d, err := blob.NewDir(root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return blobtest.Fixture{Store: d, Contents: func(t *testing.T) []string { return walkFiles(t, root) }}
	})
}

// walkFiles lists every regular file under root, staging files included.
func walkFiles(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func TestDirRemovesStaleTemp(t *testing.T) {
	root := t.TempDir()
	if _, err := blob.NewDir(root); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, ".tmp", "put-stale")
	fresh := filepath.Join(root, ".tmp", "put-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-blob.StaleTempAge - time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := blob.NewDir(root); err != nil {
		t.Fatal(err)
	}
	if got, want := walkFiles(t, root), []string{".tmp/put-fresh"}; !slices.Equal(got, want) {
		t.Fatalf("after reopening, directory holds %q, want %q", got, want)
	}
}

func TestValidKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"flat", "file-abc", true},
		{"nested", "files/ab/file-abcDEF_0.9", true},
		{"empty", "", false},
		{"absolute", "/etc/passwd", false},
		{"dot dot", "a/../b", false},
		{"hidden", "a/.git", false},
		{"backslash", `a\b`, false},
		{"trailing slash", "a/", false},
		{"space", "a b", false},
		{"unicode", "fïle", false},
		{"nul", "a\x00", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := blob.ValidKey(tc.key); (err == nil) != tc.ok {
				t.Fatalf("ValidKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
			}
		})
	}
}
