package translator

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/officetest"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/tools/render/pdf"
	"github.com/switchyardhq/switchyard/tools/render/xlsx"
	"github.com/switchyardhq/switchyard/translator/request"
)

// filesEnv is a Files API on a fresh SQLite database and a blob
// directory, both under t.TempDir.
type filesEnv struct {
	t    *testing.T
	svc  *files.Service
	meta interface {
		EnsureAccount(ctx context.Context, name string) (storage.Account, error)
	}
}

// newFilesEnv returns a filesEnv; wrap, if given, wraps the blob store.
func newFilesEnv(t *testing.T, wrap func(blob.Store) blob.Store) *filesEnv {
	t.Helper()
	meta, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "switchyard.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { meta.Close() })
	var blobs blob.Store
	if blobs, err = blob.NewDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		blobs = wrap(blobs)
	}
	svc, err := files.NewService(files.Config{Meta: meta, Blobs: blobs, Profile: policy.ProfileFor(policy.RevisionA)})
	if err != nil {
		t.Fatal(err)
	}
	return &filesEnv{t: t, svc: svc, meta: meta}
}

// account returns the id of the account named name, created on first use.
func (e *filesEnv) account(name string) string {
	e.t.Helper()
	a, err := e.meta.EnsureAccount(e.t.Context(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.ID
}

// store stores data as a generated file of the named account.
func (e *filesEnv) store(account, filename string, data []byte) storage.File {
	e.t.Helper()
	f, err := e.svc.StoreGenerated(e.t.Context(), e.account(account), filename, bytes.NewReader(data))
	if err != nil {
		e.t.Fatalf("storing %s: %v", filename, err)
	}
	return f
}

func pngImage(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// mp4Bytes is the start of an MP4 file: an ftyp box with the isom brand.
func mp4Bytes() []byte {
	return append([]byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"), make([]byte, 64)...)
}

func TestOpenerFormats(t *testing.T) {
	env := newFilesEnv(t, nil)
	o := &Opener{Files: env.svc}
	img := pngImage(t)
	tests := []struct {
		name     string
		filename string
		data     []byte
		mime     string
		text     string // wanted Text
		image    []byte // wanted Image
	}{
		{name: "txt", filename: "notes.txt", data: []byte("plain notes"), mime: "text/plain; charset=utf-8", text: "plain notes"},
		{name: "md", filename: "README.md", data: []byte("# Title"), mime: "text/markdown; charset=utf-8", text: "# Title"},
		{name: "csv", filename: "t.csv", data: []byte("a,b\n1,2\n"), mime: "text/csv; charset=utf-8", text: "a,b\n1,2\n"},
		{name: "pdf", filename: "r.pdf", data: textPDF(t, "PDF text"), mime: mimePDF, text: "PDF text"},
		{name: "docx", filename: "d.docx", data: officetest.Docx(t, officetest.Para("Word text")), mime: mimeDOCX, text: "Word text"},
		{name: "xlsx", filename: "s.xlsx", data: sheetXLSX(t, "cell"), mime: mimeXLSX, text: "## Data\ncell"},
		{name: "png", filename: "p.png", data: img, mime: "image/png", image: img},
		{name: "video is described, not read", filename: "clip.mp4", data: mp4Bytes(), mime: "video/mp4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := env.store("acct-1", tt.filename, tt.data)
			a, err := o.OpenFile(t.Context(), env.account("acct-1"), f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != tt.filename || a.MIME != tt.mime {
				t.Errorf("Name, MIME = %q, %q; want %q, %q", a.Name, a.MIME, tt.filename, tt.mime)
			}
			// A generated PDF has a title block and page numbers around
			// the text; the others must match exactly.
			if tt.name == "pdf" && strings.Contains(a.Text, tt.text) {
				a.Text = tt.text
			}
			if a.Text != tt.text || !bytes.Equal(a.Image, tt.image) {
				t.Errorf("Text %q, Image %d bytes; want %q, %d bytes", a.Text, len(a.Image), tt.text, len(tt.image))
			}
		})
	}
}

func TestOpenerNotFound(t *testing.T) {
	env := newFilesEnv(t, nil)
	o := &Opener{Files: env.svc}
	f := env.store("owner", "a.txt", []byte("secret"))
	deleted := env.store("owner", "b.txt", []byte("gone"))
	if _, err := env.svc.Delete(t.Context(), env.account("owner"), deleted.ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		account string
		id      string
	}{
		{name: "another account's file", account: "intruder", id: f.ID},
		{name: "deleted file", account: "owner", id: deleted.ID},
		{name: "unknown id", account: "owner", id: "file-000000000000000000000000"},
		{name: "malformed id", account: "owner", id: "../etc/passwd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := o.OpenFile(t.Context(), env.account(tt.account), tt.id)
			if !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("error = %v, want storage.ErrNotFound", err)
			}
			// The orchestrator passes an *apierror.Error to the client
			// unchanged; this one must become its own file_not_found.
			var ae *apierror.Error
			if errors.As(err, &ae) {
				t.Errorf("error %v is an *apierror.Error", err)
			}
			if a.Text != "" || a.Image != nil {
				t.Errorf("content leaked: %+v", a)
			}
		})
	}
}

func TestOpenerImageTooLarge(t *testing.T) {
	env := newFilesEnv(t, nil)
	img := pngImage(t)
	f := env.store("acct", "p.png", img)
	o := &Opener{Files: env.svc, MaxImageBytes: int64(len(img)) - 1}
	_, err := o.OpenFile(t.Context(), env.account("acct"), f.ID)
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != request.CodeImageTooLarge {
		t.Fatalf("error = %v, want 400 %s", err, request.CodeImageTooLarge)
	}
	o.MaxImageBytes = int64(len(img))
	if a, err := o.OpenFile(t.Context(), env.account("acct"), f.ID); err != nil || len(a.Image) != len(img) {
		t.Errorf("at the limit: %d bytes, %v", len(a.Image), err)
	}
}

func TestOpenerTruncationNote(t *testing.T) {
	env := newFilesEnv(t, nil)
	tests := []struct {
		name     string
		filename string
		data     []byte
	}{
		{name: "txt", filename: "long.txt", data: []byte(strings.Repeat("word ", 1000))},
		{name: "docx", filename: "long.docx", data: officetest.Docx(t, strings.Repeat(officetest.Para("paragraph text"), 500))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := env.store("acct", tt.filename, tt.data)
			o := &Opener{Files: env.svc, MaxChars: 300}
			a, err := o.OpenFile(t.Context(), env.account("acct"), f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(a.Text, "\n"+TruncationNote) {
				t.Errorf("text does not end with the note: %q", a.Text)
			}
			if n := utf8.RuneCountInString(a.Text); n > 300 || n < 200 {
				t.Errorf("%d characters, want at most 300 and most of them text", n)
			}
		})
	}
	f := env.store("acct", "short.txt", []byte("short"))
	a, err := (&Opener{Files: env.svc, MaxChars: 300}).OpenFile(t.Context(), env.account("acct"), f.ID)
	if err != nil || a.Text != "short" {
		t.Errorf("short file: %q, %v", a.Text, err)
	}
}

func TestOpenerUnreadableDocument(t *testing.T) {
	env := newFilesEnv(t, nil)
	// Passes the upload check (a docx package) but its body is not XML.
	f := env.store("acct", "broken.docx", officetest.Docx(t, `<w:p a=b>`))
	var logs bytes.Buffer
	o := &Opener{Files: env.svc, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	a, err := o.OpenFile(t.Context(), env.account("acct"), f.ID)
	if err != nil {
		t.Fatalf("error = %v, want an attachment the orchestrator describes", err)
	}
	if a.Text != "" || a.Image != nil || a.Name != "broken.docx" || a.MIME != mimeDOCX {
		t.Errorf("attachment = %+v", a)
	}
	if !strings.Contains(logs.String(), f.ID) || !strings.Contains(logs.String(), "malformed") {
		t.Errorf("log = %q", logs.String())
	}
}

func TestOpenerCancelled(t *testing.T) {
	env := newFilesEnv(t, nil)
	f := env.store("acct", "r.pdf", textPDF(t, "x"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (&Opener{Files: env.svc}).OpenFile(ctx, env.account("acct"), f.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

// TestOpenerClosesObjects checks that every opened blob is closed, and
// covers blob objects without random access (remote buckets), which are
// read into memory.
func TestOpenerClosesObjects(t *testing.T) {
	var cs *countingStore
	env := newFilesEnv(t, func(s blob.Store) blob.Store {
		cs = &countingStore{Store: s}
		return cs
	})
	o := &Opener{Files: env.svc, MaxImageBytes: 10}
	for _, x := range []struct {
		name, file string
		data       []byte
	}{
		{"text", "a.txt", []byte("hello")},
		{"pdf", "b.pdf", textPDF(t, "pdf via memory")},
		{"image over the limit", "c.png", pngImage(t)},
		{"video", "d.mp4", mp4Bytes()},
	} {
		f := env.store("acct", x.file, x.data)
		a, err := o.OpenFile(t.Context(), env.account("acct"), f.ID)
		if x.name == "pdf" && (err != nil || !strings.Contains(a.Text, "pdf via memory")) {
			t.Errorf("pdf: %q, %v", a.Text, err)
		}
	}
	if opened, closed := cs.opened.Load(), cs.closed.Load(); opened != 4 || closed != opened {
		t.Errorf("opened %d objects, closed %d", opened, closed)
	}
}

type countingStore struct {
	blob.Store
	opened, closed atomic.Int64
}

func (s *countingStore) Open(ctx context.Context, key string) (blob.Object, error) {
	o, err := s.Store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	s.opened.Add(1)
	return &countingObject{Object: o, closed: &s.closed}, nil
}

// countingObject hides the file's ReadAt, as a remote object has none.
type countingObject struct {
	blob.Object
	closed *atomic.Int64
}

func (o *countingObject) Close() error {
	o.closed.Add(1)
	return o.Object.Close()
}

var _ io.ReaderAt = (*bytes.Reader)(nil)

// textPDF is a PDF whose body is text, made by the document renderer.
func textPDF(t testing.TB, text string) []byte {
	t.Helper()
	out, err := pdf.Render(context.Background(), pdf.Document{Title: "Fixture", Markdown: text})
	if err != nil {
		t.Fatal(err)
	}
	return out.PDF
}

// sheetXLSX is a workbook of one sheet, Data, holding one text cell.
func sheetXLSX(t testing.TB, cell string) []byte {
	t.Helper()
	wb, err := xlsx.Parse([]byte(`{"title":"Fixture","sheets":[{"name":"Data","rows":[[` + strconv.Quote(cell) + `]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := xlsx.Render(context.Background(), wb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Media types the Files API gives the formats above.
const (
	mimePDF  = "application/pdf"
	mimeDOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)
