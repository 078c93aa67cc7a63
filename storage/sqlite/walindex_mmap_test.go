//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite

import (
	"os"
	"path/filepath"
	"testing"
)

// A wal-index cut short under the mapping (which SQLite never does while
// the store holds its connection) fails the reading instead of crashing
// the process.
func TestMappedHeaderCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x-shm")
	if err := os.WriteFile(path, make([]byte, 32<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := openWALIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if w.hdr == nil {
		t.Fatal("the header was not mapped")
	}
	var b [2 * walIndexHdrSize]byte
	if !w.read(b[:]) {
		t.Fatal("reading the mapped header failed")
	}
	if _, ok := w.revision(); ok {
		t.Fatal("a header that was never initialised gave a revision")
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if w.read(b[:]) {
		t.Fatal("reading a header cut short succeeded")
	}
	if _, ok := w.revision(); ok {
		t.Fatal("a header cut short gave a revision")
	}
}
