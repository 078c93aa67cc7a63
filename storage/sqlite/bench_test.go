package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// BenchmarkKeyRead is the one read every authenticated request makes on
// the embedded store: the key lookup on a cache miss, the balance and key
// generation on a hit.
func BenchmarkKeyRead(b *testing.B) {
	ctx := context.Background()
	s, a := openWithAccount(b, filepath.Join(b.TempDir(), "switchyard.db"), "bench")
	const hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if _, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: hash, Hint: "sk-...abcd"}); err != nil {
		b.Fatal(err)
	}
	b.Run("LookupKey (miss)", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.LookupKey(ctx, hash); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("KeyState (hit)", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := s.KeyState(ctx, a.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRevision is what a cached key costs a request while nothing
// was committed: one reading of the wal-index header.
func BenchmarkRevision(b *testing.B) {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "switchyard.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.Revision(); !ok {
			b.Fatal("no revision")
		}
	}
}
