package files_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
)

type harness struct {
	svc   *files.Service
	meta  *memStore
	blobs *blob.Dir
	clock *fakeclock.Clock
	cfg   files.Config
}

// newHarness builds a Service on an in-memory MetaStore and a blob
// directory, with revision B's limits unless edit changes them.
func newHarness(t *testing.T, edit ...func(*files.Config)) *harness {
	t.Helper()
	d, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{meta: newMemStore(), blobs: d, clock: fakeclock.New(time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC))}
	h.cfg = files.Config{
		Meta:    h.meta,
		Blobs:   d,
		Profile: policy.ProfileFor(policy.RevisionB),
		Now:     h.clock.Now,
	}
	for _, e := range edit {
		e(&h.cfg)
	}
	if h.svc, err = files.NewService(h.cfg); err != nil {
		t.Fatal(err)
	}
	return h
}

// blobFiles lists every file under the blob directory, staging included.
func (h *harness) blobFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(h.blobs.Root(), func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// wantNothingLeft fails unless the stores hold exactly n files.
func (h *harness) wantStored(t *testing.T, n int) {
	t.Helper()
	if got := h.blobFiles(t); len(got) != n {
		t.Fatalf("blob store holds %d files %v, want %d", len(got), got, n)
	}
	if rows := h.meta.all(); len(rows) != n {
		t.Fatalf("metadata store holds %d rows, want %d: %+v", len(rows), n, rows)
	}
}

func (h *harness) upload(t *testing.T, account string, parts ...part) (storage.File, error) {
	t.Helper()
	ct, body := form(t, parts...)
	return h.svc.Upload(context.Background(), account, ct, bytes.NewReader(body))
}

func (h *harness) mustUpload(t *testing.T, account string, parts ...part) storage.File {
	t.Helper()
	f, err := h.upload(t, account, parts...)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	return f
}

// part is one multipart form part. A file part has a filename.
type part struct {
	name        string
	filename    string
	hasFilename bool
	data        []byte
	header      textproto.MIMEHeader // extra headers
}

func filePart(filename string, data []byte) part {
	return part{name: "file", filename: filename, hasFilename: true, data: data}
}

func field(name, value string) part { return part{name: name, data: []byte(value)} }

var purposeAssistants = field("purpose", "assistants")

func form(t *testing.T, parts ...part) (contentType string, body []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.hasFilename {
			cd += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		for k, v := range p.header {
			h[k] = v
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.data)
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

// wantAPIError fails unless err answers the client with this status and
// code.
func wantAPIError(t *testing.T, err error, status int, code string) *apierror.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want %d %s", status, code)
	}
	ae := files.Envelope(err)
	if ae.Status != status || ae.Code != code {
		t.Fatalf("error = %d %s (%s), want %d %s", ae.Status, ae.Code, ae.Message, status, code)
	}
	return ae
}

func readBlob(t *testing.T, o blob.Object) []byte {
	t.Helper()
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
