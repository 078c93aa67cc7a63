package files_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
)

var bg = context.Background()

func TestNewServiceChecksConfig(t *testing.T) {
	d, _ := blob.NewDir(t.TempDir())
	p := policy.ProfileFor(policy.RevisionA)
	tests := []struct {
		name string
		cfg  files.Config
	}{
		{"no meta", files.Config{Blobs: d, Profile: p}},
		{"no blobs", files.Config{Meta: newMemStore(), Profile: p}},
		{"no upload limit", files.Config{Meta: newMemStore(), Blobs: d}},
		{"reserved purpose", files.Config{Meta: newMemStore(), Blobs: d, Profile: p, Purposes: []string{files.PurposeGenerated}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := files.NewService(tc.cfg); err == nil {
				t.Fatal("NewService accepted the config")
			}
		})
	}
}

func TestStoreGenerated(t *testing.T) {
	h := newHarness(t, func(c *files.Config) { c.Profile.MaxStoredFiles = 2 })
	f, err := h.svc.StoreGenerated(bg, "acct", "Quarterly report.pdf", bytes.NewReader(pdfBytes()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Source != storage.FileGenerated || f.Purpose != files.PurposeGenerated || f.MIME != "application/pdf" ||
		!f.ExpiresAt.Equal(h.clock.Now().Add(30*24*time.Hour)) {
		t.Fatalf("generated file = %+v", f)
	}
	if _, err := h.svc.StoreGenerated(bg, "acct", "chart.png", bytes.NewReader(pngBytes(t))); err != nil {
		t.Fatal(err)
	}
	// Generated files count toward the same quota as uploads.
	_, err = h.upload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))
	wantAPIError(t, err, 409, "max_files_reached")
	_, err = h.svc.StoreGenerated(bg, "acct", "more.pdf", bytes.NewReader(pdfBytes()))
	wantAPIError(t, err, 409, "max_files_reached")
	// The orchestrator tells a full quota from a failure by the error's
	// kind.
	var fe *files.Error
	if !errors.Is(err, storage.ErrTooManyFiles) || !errors.As(err, &fe) || fe.Limit != 2 {
		t.Fatalf("StoreGenerated over the quota: %v, want storage.ErrTooManyFiles with limit 2", err)
	}
	// And pass the same format check.
	h2 := newHarness(t)
	_, err = h2.svc.StoreGenerated(bg, "acct", "chart.png", bytes.NewReader(pdfBytes()))
	wantAPIError(t, err, 400, "invalid_file_format")
	_, err = h2.svc.StoreGenerated(bg, "acct", "x.pdf", bytes.NewReader(nil))
	wantAPIError(t, err, 400, "empty_file")
	h2.wantStored(t, 0)
}

func TestIsolationAnswersLikeMissing(t *testing.T) {
	h := newHarness(t)
	f := h.mustUpload(t, "alice", purposeAssistants, filePart("a.txt", []byte("alice's secret")))
	missing := files.NewID(h.clock.Now())
	for _, tc := range []struct {
		name string
		call func(account, id string) error
	}{
		{"Get", func(a, id string) error { _, err := h.svc.Get(bg, a, id); return err }},
		{"Content", func(a, id string) error { _, _, err := h.svc.Content(bg, a, id); return err }},
		{"Delete", func(a, id string) error { _, err := h.svc.Delete(bg, a, id); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			foreign := wantAPIError(t, tc.call("mallory", f.ID), 404, "not_found")
			absent := wantAPIError(t, tc.call("mallory", missing), 404, "not_found")
			if strings.ReplaceAll(foreign.Message, f.ID, "ID") != strings.ReplaceAll(absent.Message, missing, "ID") ||
				foreign.Type != absent.Type {
				t.Fatalf("another account's file answers %+v, a missing one %+v", foreign, absent)
			}
		})
	}
	if _, err := h.svc.Get(bg, "alice", f.ID); err != nil {
		t.Fatalf("owner lost the file: %v", err)
	}
	if p, _ := h.svc.List(bg, "mallory", storage.FileListParams{}); len(p.Files) != 0 {
		t.Fatalf("another account lists %d files", len(p.Files))
	}
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	f := h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("bye")))
	got, err := h.svc.Delete(bg, "acct", f.ID)
	if err != nil || got.ID != f.ID {
		t.Fatalf("Delete = %+v, %v", got, err)
	}
	h.wantStored(t, 0)
	_, err = h.svc.Delete(bg, "acct", f.ID)
	wantAPIError(t, err, 404, "not_found")
	_, err = h.svc.Get(bg, "acct", f.ID)
	wantAPIError(t, err, 404, "not_found")
	_, err = h.svc.Delete(bg, "acct", "not-an-id")
	wantAPIError(t, err, 404, "not_found")
}

func TestExpiryIsImmediate(t *testing.T) {
	h := newHarness(t)
	f := h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("short-lived")))
	h.clock.Advance(30*24*time.Hour - time.Second)
	if _, err := h.svc.Get(bg, "acct", f.ID); err != nil {
		t.Fatalf("Get a second before expiry: %v", err)
	}
	h.clock.Advance(time.Second)
	_, err := h.svc.Get(bg, "acct", f.ID)
	wantAPIError(t, err, 404, "not_found")
	_, _, err = h.svc.Content(bg, "acct", f.ID)
	wantAPIError(t, err, 404, "not_found")
	if p, _ := h.svc.List(bg, "acct", storage.FileListParams{}); len(p.Files) != 0 {
		t.Fatalf("List shows %d expired files", len(p.Files))
	}
	h.wantStored(t, 1) // no janitor has run: the bytes are still there

	j := &files.Janitor{Meta: h.meta, Blobs: h.blobs, Now: h.clock.Now}
	n, err := j.Sweep(bg)
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 removed", n, err)
	}
	h.wantStored(t, 0)
}

func TestList(t *testing.T) {
	h := newHarness(t)
	var asc []string
	for i := range 5 {
		purpose := "assistants"
		if i%2 == 1 {
			purpose = "user_data"
		}
		f := h.mustUpload(t, "acct", field("purpose", purpose), filePart("a.txt", []byte("x")))
		asc = append(asc, f.ID)
		h.clock.Advance(time.Second)
	}
	page, err := h.svc.List(bg, "acct", storage.FileListParams{})
	if err != nil || len(page.Files) != 5 || page.HasMore || page.Files[0].ID != asc[4] {
		t.Fatalf("default List = %d files, has_more %v, %v; want 5 newest first", len(page.Files), page.HasMore, err)
	}
	page, _ = h.svc.List(bg, "acct", storage.FileListParams{Limit: 2, Order: storage.FileOrderAsc})
	if len(page.Files) != 2 || !page.HasMore || page.Files[1].ID != asc[1] {
		t.Fatalf("first page = %+v", page)
	}
	page, _ = h.svc.List(bg, "acct", storage.FileListParams{Limit: 3, Order: storage.FileOrderAsc, After: asc[1]})
	if len(page.Files) != 3 || page.HasMore || page.Files[0].ID != asc[2] {
		t.Fatalf("last page = %+v", page)
	}
	page, _ = h.svc.List(bg, "acct", storage.FileListParams{Purpose: "user_data"})
	if len(page.Files) != 2 {
		t.Fatalf("purpose filter returned %d files, want 2", len(page.Files))
	}

	for _, tc := range []struct {
		name string
		p    storage.FileListParams
		code string
	}{
		{"negative limit", storage.FileListParams{Limit: -1}, "invalid_limit"},
		{"limit over 10000", storage.FileListParams{Limit: 10_001}, "invalid_limit"},
		{"bad order", storage.FileListParams{Order: "sideways"}, "invalid_order"},
		{"bad cursor", storage.FileListParams{After: "file-../../x"}, "invalid_after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.svc.List(bg, "acct", tc.p)
			wantAPIError(t, err, 400, tc.code)
		})
	}
}

func TestJanitorCleansCrashedUploads(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	// What a process that died mid-upload leaves: a pending row and
	// (some of) the bytes.
	id := files.NewID(now)
	if err := h.meta.Begin(bg, storage.File{ID: id, AccountID: "acct", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.blobs.Put(bg, "files/"+id[len(id)-2:]+"/"+id, strings.NewReader("partial")); err != nil {
		t.Fatal(err)
	}
	live := h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("keep me")))

	j := &files.Janitor{Meta: h.meta, Blobs: h.blobs, Now: h.clock.Now}
	if n, err := j.Sweep(bg); err != nil || n != 0 {
		t.Fatalf("Sweep inside the lease = %d, %v; want nothing removed", n, err)
	}
	h.clock.Advance(time.Hour)
	if n, err := j.Sweep(bg); err != nil || n != 1 {
		t.Fatalf("Sweep after the lease = %d, %v; want 1 removed", n, err)
	}
	h.wantStored(t, 1)
	if _, err := h.svc.Get(bg, "acct", live.ID); err != nil {
		t.Fatalf("live file lost: %v", err)
	}
}

func TestJanitorsRace(t *testing.T) {
	h := newHarness(t, func(c *files.Config) { c.Profile.MaxStoredFiles = 0 })
	for range 30 {
		h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))
	}
	h.clock.Advance(31 * 24 * time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		j := &files.Janitor{Meta: h.meta, Blobs: h.blobs, Now: h.clock.Now, BatchSize: 4}
		wg.Go(func() {
			if _, err := j.Sweep(bg); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h.wantStored(t, 0)
}

// flakyBlobs fails deletes while down is set.
type flakyBlobs struct {
	blob.Store
	mu   sync.Mutex
	down bool
}

func (f *flakyBlobs) Delete(ctx context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errors.New("object store unavailable")
	}
	return f.Store.Delete(ctx, key)
}

func TestDeleteSurvivesBlobOutage(t *testing.T) {
	h := newHarness(t)
	flaky := &flakyBlobs{Store: h.blobs}
	h.cfg.Blobs = flaky
	svc, _ := files.NewService(h.cfg)
	f := h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))

	flaky.down = true
	if _, err := svc.Delete(bg, "acct", f.ID); err != nil {
		t.Fatalf("Delete during a blob outage: %v (the file must be gone for the client anyway)", err)
	}
	_, err := svc.Get(bg, "acct", f.ID)
	wantAPIError(t, err, 404, "not_found")
	h.wantStored(t, 1) // row and bytes wait for the janitor

	j := &files.Janitor{Meta: h.meta, Blobs: flaky, Now: h.clock.Now}
	if n, err := j.Sweep(bg); err == nil || n != 0 {
		t.Fatalf("Sweep during the outage = %d, %v; want an error and nothing removed", n, err)
	}
	flaky.down = false
	if n, err := j.Sweep(bg); err != nil || n != 1 {
		t.Fatalf("Sweep after the outage = %d, %v; want 1 removed", n, err)
	}
	h.wantStored(t, 0)
}

func TestIDs(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := files.NewID(now), files.NewID(now.Add(time.Millisecond))
	if !files.ValidID(a) || !files.ValidID(b) || len(a) != len("file-")+24 {
		t.Fatalf("ids %q %q", a, b)
	}
	if a >= b {
		t.Fatalf("ids do not sort by time: %q >= %q", a, b)
	}
	if files.NewID(now) == a {
		t.Fatal("two ids at the same instant are equal")
	}
	for _, bad := range []string{"", "file-", "file-abc", "file-" + strings.Repeat("a", 23) + "!", "xxxx-" + strings.Repeat("a", 24)} {
		if files.ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}
