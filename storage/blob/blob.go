// Package blob stores the bytes of files (uploads and generated outputs)
// under opaque keys. Two implementations exist: Dir, a local directory for
// the single-node default, and Bucket, any S3-compatible object store for
// several nodes. Both pass the contract suite in storage/blob/blobtest.
//
// Keys are chosen by the server, never derived from anything a client
// sends, and are checked by ValidKey before they touch a path or a URL.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Store holds blobs. Implementations are safe for concurrent use.
type Store interface {
	// Put streams r to key and returns the number of bytes stored. The
	// blob becomes visible only once all of r has been stored durably: if
	// reading r fails, or ctx ends, before that, Put returns an error and
	// leaves nothing new behind (a blob that was at key before stays).
	// An existing blob at key is replaced.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)

	// Open returns the blob at key for reading, or ErrNotFound. ctx
	// governs every read made through the returned Object, not only the
	// call to Open.
	Open(ctx context.Context, key string) (Object, error)

	// Delete removes the blob at key. Deleting a missing blob is not an
	// error, so that cleanup can be retried, and run by several
	// processes at once, without special cases.
	Delete(ctx context.Context, key string) error

	// Close releases the store's resources.
	Close() error
}

// Object is an open blob. Seeking is cheap: implementations over the
// network fetch the bytes from the new offset only when they are read,
// so http.ServeContent can answer range requests from it.
type Object interface {
	io.ReadSeekCloser
	// Size is the blob's length in bytes.
	Size() int64
}

// ErrNotFound is returned by Open for a key that holds no blob.
var ErrNotFound = errors.New("blob: not found")

// ErrInvalidKey wraps the reason ValidKey rejected a key.
var ErrInvalidKey = errors.New("blob: invalid key")

// MaxKeyLen bounds a key's length in bytes.
const MaxKeyLen = 512

// ValidKey reports whether key is acceptable to every Store: one or more
// slash-separated segments of ASCII letters, digits, '-', '_' and '.',
// where no segment is empty or starts with a dot. That excludes absolute
// paths, "..", hidden names (Dir keeps its temporary files in ".tmp"),
// backslashes and anything a filesystem or URL would reinterpret.
func ValidKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" {
			return fmt.Errorf("%w: %q has an empty segment", ErrInvalidKey, key)
		}
		if seg[0] == '.' {
			return fmt.Errorf("%w: %q has a segment starting with a dot", ErrInvalidKey, key)
		}
		for i := 0; i < len(seg); i++ {
			if !keyByte(seg[i]) {
				return fmt.Errorf("%w: %q holds byte %#x", ErrInvalidKey, key, seg[i])
			}
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}

// ctxReader fails reads once ctx is done, so that copying from a reader
// that never blocks (a file, a buffer) still stops on cancellation.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
