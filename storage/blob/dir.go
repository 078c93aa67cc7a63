package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// tempDir is where Dir stages writes. ValidKey refuses segments that start
// with a dot, so no key can name it.
const tempDir = ".tmp"

// StaleTempAge is how old a staged write must be before NewDir removes it
// as debris of a crashed process. It is far longer than any upload may
// take, so a write still in progress in another process sharing the
// directory is never removed.
const StaleTempAge = 24 * time.Hour

// Dir stores blobs as files under a root directory. A Put writes to a
// temporary file in the same filesystem, syncs it and renames it into
// place, so a reader sees either the whole blob or none, also after a
// crash. Several processes may share one Dir.
type Dir struct {
	root string
}

// NewDir opens (creating it if needed, mode 0700) the directory root as a
// blob store, and removes staged writes older than StaleTempAge.
func NewDir(root string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("blob: empty directory path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blob: resolving %s: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, tempDir), 0o700); err != nil {
		return nil, fmt.Errorf("blob: creating %s: %w", abs, err)
	}
	d := &Dir{root: abs}
	if _, err := d.RemoveStaleTemp(time.Now().Add(-StaleTempAge)); err != nil {
		return nil, err
	}
	return d, nil
}

// Root is the directory's absolute path.
func (d *Dir) Root() string { return d.root }

func (d *Dir) path(key string) (string, error) {
	if err := ValidKey(key); err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader) (n int64, err error) {
	dst, err := d.path(key)
	if err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Join(d.root, tempDir), "put-*")
	if err != nil {
		return 0, fmt.Errorf("blob: staging %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err = io.Copy(tmp, ctxReader{ctx, r})
	if err != nil {
		return n, fmt.Errorf("blob: writing %s: %w", key, err)
	}
	// Sync before rename: otherwise a crash can leave the new name
	// pointing at an empty or partial file on filesystems that reorder
	// metadata and data writes (ext4 with delalloc, XFS).
	if err = tmp.Sync(); err != nil {
		return n, fmt.Errorf("blob: syncing %s: %w", key, err)
	}
	if err = tmp.Close(); err != nil {
		return n, fmt.Errorf("blob: closing %s: %w", key, err)
	}
	if err = ctx.Err(); err != nil {
		return n, err
	}
	if err = os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return n, fmt.Errorf("blob: creating directory for %s: %w", key, err)
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return n, fmt.Errorf("blob: placing %s: %w", key, err)
	}
	// The rename is durable only once the directory entry is.
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return n, fmt.Errorf("blob: syncing directory of %s: %w", key, err)
	}
	return n, nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Open implements Store.
func (d *Dir) Open(ctx context.Context, key string) (Object, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("blob: opening %s: %w", key, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob: stat %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotFound
	}
	return &dirObject{File: f, size: st.Size()}, nil
}

type dirObject struct {
	*os.File
	size int64
}

func (o *dirObject) Size() int64 { return o.size }

// Delete implements Store.
func (d *Dir) Delete(ctx context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: deleting %s: %w", key, err)
	}
	return nil
}

// RemoveStaleTemp removes staged writes last modified before cutoff and
// reports how many it removed.
func (d *Dir) RemoveStaleTemp(cutoff time.Time) (int, error) {
	dir := filepath.Join(d.root, tempDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("blob: listing %s: %w", dir, err)
	}
	removed := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue // gone meanwhile, or still fresh
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			removed++
		}
	}
	return removed, nil
}

// Close implements Store. A Dir holds no resources.
func (d *Dir) Close() error { return nil }

var _ Store = (*Dir)(nil)
