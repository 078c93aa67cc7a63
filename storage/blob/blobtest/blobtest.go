// Package blobtest is the contract suite every blob.Store passes.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/storage/blob"
)

// Fixture is a fresh, empty store and a view of its backend.
type Fixture struct {
	Store blob.Store
	// Contents lists every object the backend holds, committed or not
	// (for a directory: every regular file under it, staging files
	// included), as sorted names; committed blobs appear under their key.
	// The suite uses it to prove that aborted writes leave nothing.
	Contents func(t *testing.T) []string
}

// Run runs the suite. open is called once per subtest and must return an
// empty store; it registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) Fixture) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Fixture)
	}{
		{"round trip", testRoundTrip},
		{"large round trip", testLargeRoundTrip},
		{"empty blob", testEmpty},
		{"overwrite replaces", testOverwrite},
		{"open missing", testOpenMissing},
		{"delete", testDelete},
		{"invalid keys", testInvalidKeys},
		{"seek and ranges", testSeek},
		{"reader error leaves nothing", testReaderError},
		{"reader error keeps previous blob", testReaderErrorKeepsPrevious},
		{"cancel leaves nothing", testCancel},
		{"large reader error leaves nothing", testLargeAbort},
		{"concurrent puts", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, s blob.Store, key string, data []byte) {
	t.Helper()
	n, err := s.Put(context.Background(), key, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	if n != int64(len(data)) {
		t.Fatalf("Put(%q) = %d bytes, want %d", key, n, len(data))
	}
}

func read(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	o, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	if o.Size() != int64(len(b)) {
		t.Fatalf("Size() = %d, read %d bytes", o.Size(), len(b))
	}
	return b
}

func wantContents(t *testing.T, f Fixture, want ...string) {
	t.Helper()
	got := f.Contents(t)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("backend holds %q, want %q", got, want)
	}
}

func testRoundTrip(t *testing.T, f Fixture) {
	data := randomBytes(t, 100_000)
	put(t, f.Store, "files/ab/file-1", data)
	if got := read(t, f.Store, "files/ab/file-1"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
	}
	wantContents(t, f, "files/ab/file-1")
}

func testLargeRoundTrip(t *testing.T, f Fixture) {
	data := randomBytes(t, 12<<20) // several parts for an object store
	put(t, f.Store, "large", data)
	if got := read(t, f.Store, "large"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
	}
}

func testEmpty(t *testing.T, f Fixture) {
	put(t, f.Store, "empty", nil)
	if got := read(t, f.Store, "empty"); len(got) != 0 {
		t.Fatalf("read %d bytes from an empty blob", len(got))
	}
}

func testOverwrite(t *testing.T, f Fixture) {
	put(t, f.Store, "k", []byte("first version, longer"))
	put(t, f.Store, "k", []byte("second"))
	if got := string(read(t, f.Store, "k")); got != "second" {
		t.Fatalf("read %q after overwrite", got)
	}
}

func testOpenMissing(t *testing.T, f Fixture) {
	_, err := f.Store.Open(context.Background(), "no/such/key")
	if !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open(missing) error = %v, want ErrNotFound", err)
	}
}

func testDelete(t *testing.T, f Fixture) {
	ctx := context.Background()
	put(t, f.Store, "a/b", []byte("x"))
	put(t, f.Store, "a/c", []byte("y"))
	if err := f.Store.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := f.Store.Open(ctx, "a/b"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after Delete: error = %v, want ErrNotFound", err)
	}
	if err := f.Store.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("second Delete: %v, want nil", err)
	}
	if err := f.Store.Delete(ctx, "never/there"); err != nil {
		t.Fatalf("Delete(missing): %v, want nil", err)
	}
	if got := string(read(t, f.Store, "a/c")); got != "y" {
		t.Fatalf("neighbour reads %q after Delete", got)
	}
	wantContents(t, f, "a/c")
}

func testInvalidKeys(t *testing.T, f Fixture) {
	ctx := context.Background()
	for _, key := range []string{
		"", "/abs", "../up", "a/../../b", "..", ".tmp/x", ".hidden", `a\b`,
		"a//b", "a/", "ü", "a b", "a\x00b", "a:b", string(bytes.Repeat([]byte("k"), blob.MaxKeyLen+1)),
	} {
		if _, err := f.Store.Put(ctx, key, bytes.NewReader([]byte("x"))); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if _, err := f.Store.Open(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Open(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if err := f.Store.Delete(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	wantContents(t, f)
}

func testSeek(t *testing.T, f Fixture) {
	data := randomBytes(t, 10_000)
	put(t, f.Store, "seek", data)
	o, err := f.Store.Open(context.Background(), "seek")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if end, err := o.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Fatalf("Seek(0, end) = %d, %v; want %d", end, err, len(data))
	}
	for _, r := range []struct{ off, n int }{{0, 10}, {5000, 1234}, {9990, 10}, {17, 1}} {
		if _, err := o.Seek(int64(r.off), io.SeekStart); err != nil {
			t.Fatalf("Seek(%d): %v", r.off, err)
		}
		buf := make([]byte, r.n)
		if _, err := io.ReadFull(o, buf); err != nil {
			t.Fatalf("reading %d bytes at %d: %v", r.n, r.off, err)
		}
		if !bytes.Equal(buf, data[r.off:r.off+r.n]) {
			t.Fatalf("bytes at %d differ", r.off)
		}
	}
}

var errBroken = errors.New("client went away")

// brokenReader fails every read, like a body whose client went away.
type brokenReader struct{}

// newBrokenReader yields n random bytes, then fails.
func newBrokenReader(t *testing.T, n int) io.Reader {
	return io.MultiReader(bytes.NewReader(randomBytes(t, n)), brokenReader{})
}

func (brokenReader) Read([]byte) (int, error) { return 0, errBroken }

func testReaderError(t *testing.T, f Fixture) {
	_, err := f.Store.Put(context.Background(), "broken", newBrokenReader(t, 70_000))
	if !errors.Is(err, errBroken) {
		t.Fatalf("Put error = %v, want the reader's error", err)
	}
	if _, err := f.Store.Open(context.Background(), "broken"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after failed Put: error = %v, want ErrNotFound", err)
	}
	wantContents(t, f)
}

func testReaderErrorKeepsPrevious(t *testing.T, f Fixture) {
	put(t, f.Store, "k", []byte("kept"))
	if _, err := f.Store.Put(context.Background(), "k", newBrokenReader(t, 1000)); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	if got := string(read(t, f.Store, "k")); got != "kept" {
		t.Fatalf("read %q after failed overwrite, want the previous blob", got)
	}
	wantContents(t, f, "k")
}

// cancelReader cancels its context after n bytes and keeps yielding.
type cancelReader struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
	}
	p = p[:min(len(p), 4096)]
	c.n -= len(p)
	clear(p)
	return len(p), nil
}

func testCancel(t *testing.T, f Fixture) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := f.Store.Put(ctx, "cancelled", &cancelReader{n: 50_000, cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put error = %v, want context.Canceled", err)
	}
	wantContents(t, f)
}

func testLargeAbort(t *testing.T, f Fixture) {
	// Larger than the multipart threshold of S3 clients (5-8 MiB), so
	// that an object store has parts to abort.
	_, err := f.Store.Put(context.Background(), "large", newBrokenReader(t, 12<<20))
	if !errors.Is(err, errBroken) {
		t.Fatalf("Put error = %v, want the reader's error", err)
	}
	wantContents(t, f)
}

func testConcurrent(t *testing.T, f Fixture) {
	const n = 8
	var wg sync.WaitGroup
	datas := make([][]byte, n)
	for i := range n {
		datas[i] = randomBytes(t, 20_000+i)
	}
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("c/%d", i)
			if _, err := f.Store.Put(context.Background(), key, bytes.NewReader(datas[i])); err != nil {
				errs <- fmt.Errorf("Put(%s): %w", key, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range n {
		if got := read(t, f.Store, fmt.Sprintf("c/%d", i)); !bytes.Equal(got, datas[i]) {
			t.Fatalf("blob c/%d differs", i)
		}
	}
}
