package files_test

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files/filestest"
	"github.com/switchyardhq/switchyard/storage"
)

// memStore is an in-memory MetaStore for tests. One mutex serializes
// everything, which makes quota checks trivially exact.
type memStore struct {
	mu   sync.Mutex
	rows map[string]storage.File
}

func newMemStore() *memStore { return &memStore{rows: map[string]storage.File{}} }

func visible(f storage.File, now time.Time) bool { return !f.Pending && f.ExpiresAt.After(now) }

func (m *memStore) Begin(_ context.Context, f storage.File) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f.Pending = true
	m.rows[f.ID] = f
	return nil
}

func (m *memStore) Commit(_ context.Context, f storage.File, q storage.FileQuota, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.rows[f.ID]
	if !ok || !p.Pending || p.AccountID != f.AccountID || !p.ExpiresAt.After(now) {
		return storage.ErrNotFound
	}
	u := m.usage(f.AccountID, now)
	if q.MaxFiles > 0 && u.Files+1 > q.MaxFiles {
		return storage.ErrTooManyFiles
	}
	if q.MaxBytes > 0 && u.Bytes+f.Bytes > q.MaxBytes {
		return storage.ErrTooManyBytes
	}
	p.Filename, p.Purpose, p.Bytes, p.MIME, p.SHA256 = f.Filename, f.Purpose, f.Bytes, f.MIME, f.SHA256
	p.Flagged, p.ExpiresAt, p.Pending = f.Flagged, f.ExpiresAt, false
	m.rows[f.ID] = p
	return nil
}

func (m *memStore) Get(_ context.Context, accountID, id string, now time.Time) (storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.visibleLocked(accountID, id, now)
}

// visibleLocked returns the file id of accountID if it is visible at now.
func (m *memStore) visibleLocked(accountID, id string, now time.Time) (storage.File, error) {
	f, ok := m.rows[id]
	if !ok || f.AccountID != accountID || !visible(f, now) {
		return storage.File{}, storage.ErrNotFound
	}
	return f, nil
}

func (m *memStore) List(_ context.Context, accountID string, p storage.FileListParams, now time.Time) ([]storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []storage.File
	for _, f := range m.rows {
		if f.AccountID != accountID || !visible(f, now) || p.Purpose != "" && f.Purpose != p.Purpose {
			continue
		}
		if p.After != "" && (p.Order == storage.FileOrderAsc && f.ID <= p.After || p.Order != storage.FileOrderAsc && f.ID >= p.After) {
			continue
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b storage.File) int {
		if p.Order == storage.FileOrderAsc {
			return cmp.Compare(a.ID, b.ID)
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out[:min(len(out), p.Limit)], nil
}

func (m *memStore) Usage(_ context.Context, accountID string, now time.Time) (storage.FileUsage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage(accountID, now), nil
}

func (m *memStore) usage(accountID string, now time.Time) storage.FileUsage {
	var u storage.FileUsage
	for _, f := range m.rows {
		if f.AccountID == accountID && visible(f, now) {
			u.Files++
			u.Bytes += f.Bytes
		}
	}
	return u
}

func (m *memStore) Expire(_ context.Context, accountID, id string, now time.Time) (storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := m.visibleLocked(accountID, id, now)
	if err != nil {
		return storage.File{}, err
	}
	e := f
	e.ExpiresAt = now
	m.rows[id] = e
	return f, nil
}

func (m *memStore) Expired(_ context.Context, now time.Time, limit int) ([]storage.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []storage.File
	for _, f := range m.rows {
		if !f.ExpiresAt.After(now) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b storage.File) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	return out[:min(len(out), limit)], nil
}

func (m *memStore) Remove(_ context.Context, id string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.rows[id]; ok && (f.Pending || !f.ExpiresAt.After(now)) {
		delete(m.rows, id)
	}
	return nil
}

// all returns every row, pending ones included.
func (m *memStore) all() []storage.File {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]storage.File, 0, len(m.rows))
	for _, f := range m.rows {
		out = append(out, f)
	}
	return out
}

func TestMemStoreContract(t *testing.T) {
	filestest.Run(t, func(*testing.T) storage.FileMeta { return newMemStore() })
}
