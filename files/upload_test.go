package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/storage"
)

func TestUploadStoresFile(t *testing.T) {
	h := newHarness(t)
	data := pngBytes(t)
	for _, order := range []string{"purpose first", "file first"} {
		t.Run(order, func(t *testing.T) {
			parts := []part{purposeAssistants, filePart(`C:\pics\chart ✓.png`, data)}
			if order == "file first" {
				parts[0], parts[1] = parts[1], parts[0]
			}
			f := h.mustUpload(t, "acct", parts...)
			sum := sha256.Sum256(data)
			now := h.clock.Now()
			switch {
			case !files.ValidID(f.ID):
				t.Fatalf("id %q is not a file id", f.ID)
			case f.AccountID != "acct" || f.Filename != "chart ✓.png" || f.Purpose != "assistants":
				t.Fatalf("file = %+v", f)
			case f.Bytes != int64(len(data)) || f.SHA256 != hex.EncodeToString(sum[:]) || f.MIME != "image/png":
				t.Fatalf("content fields = %d %s %s", f.Bytes, f.SHA256, f.MIME)
			case f.Source != storage.FileUploaded || f.Flagged || f.Pending:
				t.Fatalf("state = %+v", f)
			case !f.CreatedAt.Equal(now) || !f.ExpiresAt.Equal(now.Add(30*24*time.Hour)):
				t.Fatalf("created %v expires %v, want %v + 30 days", f.CreatedAt, f.ExpiresAt, now)
			}
			got, o, err := h.svc.Content(context.Background(), "acct", f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if b := readBlob(t, o); !bytes.Equal(b, data) || got.ID != f.ID {
				t.Fatalf("content differs from the upload")
			}
		})
	}
	h.wantStored(t, 2)
}

func TestUploadRefusals(t *testing.T) {
	png := pngBytes(t)
	longHeader := textproto.MIMEHeader{"X-Padding": {strings.Repeat("a", 70<<10)}}
	tests := []struct {
		name        string
		contentType string // overrides the form's
		body        string // overrides the form's
		parts       []part
		status      int
		code        string
	}{
		{name: "json body", contentType: "application/json", body: `{"purpose":"assistants"}`, status: 400, code: "invalid_content_type"},
		{name: "no content type", contentType: "", body: "x", status: 400, code: "invalid_content_type"},
		{name: "multipart without boundary", contentType: "multipart/form-data", body: "x", status: 400, code: "invalid_content_type"},
		{name: "urlencoded form", contentType: "application/x-www-form-urlencoded", body: "purpose=assistants", status: 400, code: "invalid_content_type"},
		{name: "garbage body", contentType: "multipart/form-data; boundary=XYZ", body: "this is not multipart at all", status: 400, code: "malformed_multipart"},
		{name: "truncated body", contentType: "multipart/form-data; boundary=XYZ",
			body:   "--XYZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nassistants\r\n--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello",
			status: 400, code: "malformed_multipart"},
		{name: "empty form", parts: nil, status: 400, code: "missing_file"},
		{name: "no file", parts: []part{purposeAssistants}, status: 400, code: "missing_file"},
		{name: "file field without filename", parts: []part{purposeAssistants, field("file", "hello")}, status: 400, code: "invalid_filename"},
		{name: "filename empty after sanitizing", parts: []part{purposeAssistants, filePart("dir/", png)}, status: 400, code: "invalid_filename"},
		{name: "two files", parts: []part{purposeAssistants, filePart("a.png", png), filePart("b.png", png)}, status: 400, code: "multiple_files"},
		{name: "second file under another name", parts: []part{purposeAssistants, filePart("a.png", png),
			{name: "other", filename: "b.png", hasFilename: true, data: png}}, status: 400, code: "multiple_files"},
		{name: "empty file", parts: []part{purposeAssistants, filePart("a.txt", nil)}, status: 400, code: "empty_file"},
		{name: "no purpose", parts: []part{filePart("a.png", png)}, status: 400, code: "missing_purpose"},
		{name: "unsupported purpose first", parts: []part{field("purpose", "fine-tune"), filePart("a.png", png)}, status: 400, code: "invalid_purpose"},
		{name: "unsupported purpose after the file", parts: []part{filePart("a.png", png), field("purpose", "batch")}, status: 400, code: "invalid_purpose"},
		{name: "reserved purpose", parts: []part{field("purpose", files.PurposeGenerated), filePart("a.png", png)}, status: 400, code: "invalid_purpose"},
		{name: "purpose twice", parts: []part{purposeAssistants, purposeAssistants, filePart("a.png", png)}, status: 400, code: "invalid_purpose"},
		{name: "over-long field", parts: []part{field("purpose", strings.Repeat("a", 1000)), filePart("a.png", png)}, status: 400, code: "field_too_long"},
		{name: "over-long part header", parts: []part{purposeAssistants, {name: "file", filename: "a.png", hasFilename: true, data: png, header: longHeader}},
			status: 400, code: "multipart_headers_too_large"},
		{name: "many small fields", parts: manyFields(2000), status: 400, code: "multipart_headers_too_large"},
		{name: "unsupported format", parts: []part{purposeAssistants, filePart("a.exe", []byte("MZ\x90\x00binary"))}, status: 400, code: "invalid_file_format"},
		{name: "extension mismatch", parts: []part{purposeAssistants, filePart("a.pdf", png)}, status: 400, code: "invalid_file_format"},
		{name: "expires_after too short", parts: []part{purposeAssistants, filePart("a.png", png),
			field("expires_after[anchor]", "created_at"), field("expires_after[seconds]", "60")}, status: 400, code: "invalid_expires_after"},
		{name: "expires_after beyond retention", parts: []part{purposeAssistants, filePart("a.png", png),
			field("expires_after[anchor]", "created_at"), field("expires_after[seconds]", "9999999")}, status: 400, code: "invalid_expires_after"},
		{name: "expires_after without anchor", parts: []part{purposeAssistants, filePart("a.png", png),
			field("expires_after[seconds]", "7200")}, status: 400, code: "invalid_expires_after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ct, body := form(t, tc.parts...)
			if tc.body != "" || tc.contentType != "" {
				ct, body = tc.contentType, []byte(tc.body)
			}
			_, err := h.svc.Upload(context.Background(), "acct", ct, bytes.NewReader(body))
			wantAPIError(t, err, tc.status, tc.code)
			h.wantStored(t, 0)
		})
	}
}

func manyFields(n int) []part {
	parts := []part{purposeAssistants}
	for range n {
		parts = append(parts, field("x", "0123456789012345678901234567890123456789"))
	}
	return append(parts, filePart("a.png", nil))
}

func TestUploadSizeLimit(t *testing.T) {
	const limit = 1000
	h := newHarness(t, func(c *files.Config) { c.Profile.MaxUploadBytes = limit })
	at := bytes.Repeat([]byte("a"), limit)
	f, err := h.upload(t, "acct", purposeAssistants, filePart("a.txt", at))
	if err != nil || f.Bytes != limit {
		t.Fatalf("upload of exactly the limit: %+v, %v", f, err)
	}
	over := bytes.Repeat([]byte("a"), limit+1)
	_, err = h.upload(t, "acct", purposeAssistants, filePart("b.txt", over))
	wantAPIError(t, err, 413, "file_too_large")
	h.wantStored(t, 1)
}

func TestUploadExpiresAfter(t *testing.T) {
	h := newHarness(t)
	f := h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("hi")),
		field("expires_after[anchor]", "created_at"), field("expires_after[seconds]", "3600"))
	if want := h.clock.Now().Add(time.Hour); !f.ExpiresAt.Equal(want) {
		t.Fatalf("ExpiresAt = %v, want %v", f.ExpiresAt, want)
	}
}

// failingBody yields the start of a multipart body, then fails like a
// connection the client dropped.
type failingBody struct {
	r    io.Reader
	err  error
	hook func()
}

func (b *failingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		if b.hook != nil {
			b.hook()
		}
		return n, b.err
	}
	return n, err
}

func TestUploadClientGone(t *testing.T) {
	data := bytes.Repeat([]byte("text "), 50_000)
	for _, tc := range []struct {
		name   string
		cancel bool
	}{{"connection drops", false}, {"request context cancelled", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ct, body := form(t, purposeAssistants, filePart("a.txt", data))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fb := &failingBody{r: bytes.NewReader(body[:len(body)/2]), err: io.ErrUnexpectedEOF}
			if tc.cancel {
				fb.hook = cancel
			}
			_, err := h.svc.Upload(ctx, "acct", ct, fb)
			if tc.cancel {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Upload error = %v, want context.Canceled", err)
				}
			} else {
				wantAPIError(t, err, 400, "malformed_multipart")
			}
			h.wantStored(t, 0)
		})
	}
}

func TestUploadQuotas(t *testing.T) {
	t.Run("file count", func(t *testing.T) {
		h := newHarness(t, func(c *files.Config) { c.Profile.MaxStoredFiles = 2 })
		for range 2 {
			h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))
		}
		_, err := h.upload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))
		wantAPIError(t, err, 409, "max_files_reached")
		h.mustUpload(t, "other", purposeAssistants, filePart("a.txt", []byte("x")))
		h.wantStored(t, 3)
	})
	t.Run("bytes", func(t *testing.T) {
		h := newHarness(t, func(c *files.Config) { c.Profile.MaxStoredBytes = 10 })
		h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("123456")))
		_, err := h.upload(t, "acct", purposeAssistants, filePart("b.txt", []byte("12345")))
		wantAPIError(t, err, 409, "max_storage_reached")
		h.mustUpload(t, "acct", purposeAssistants, filePart("c.txt", []byte("1234")))
		_, err = h.upload(t, "acct", purposeAssistants, filePart("d.txt", []byte("1")))
		wantAPIError(t, err, 409, "max_storage_reached") // refused before reading: already full
		h.wantStored(t, 2)
	})
	t.Run("exact under concurrency", func(t *testing.T) {
		h := newHarness(t, func(c *files.Config) { c.Profile.MaxStoredFiles = 3 })
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[string]int{}
		for range 12 {
			ct, body := form(t, purposeAssistants, filePart("a.txt", []byte("x")))
			wg.Go(func() {
				_, err := h.svc.Upload(context.Background(), "acct", ct, bytes.NewReader(body))
				code := "ok"
				if err != nil {
					code = wantAPIError(t, err, 409, "max_files_reached").Code
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if codes["ok"] != 3 || codes["max_files_reached"] != 9 {
			t.Fatalf("outcomes %v, want 3 ok and 9 max_files_reached", codes)
		}
		h.wantStored(t, 3)
	})
}

// fakeScanner gives a fixed outcome.
type fakeScanner struct {
	startErr   error
	verdict    files.Verdict
	verdictErr error

	mu      sync.Mutex
	scanned [][]byte
}

func (f *fakeScanner) NewScan(context.Context) (files.Scan, error) {
	if f.startErr != nil {
		return nil, f.startErr
	}
	return &fakeScan{f: f}, nil
}

type fakeScan struct {
	f   *fakeScanner
	buf bytes.Buffer
}

func (s *fakeScan) Write(p []byte) (int, error) { return s.buf.Write(p) }
func (s *fakeScan) Close() error                { return nil }
func (s *fakeScan) Verdict() (files.Verdict, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.scanned = append(s.f.scanned, s.buf.Bytes())
	return s.f.verdict, s.f.verdictErr
}

func TestUploadScan(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name        string
		scanner     *fakeScanner
		failOpen    bool
		code        string // "" means stored
		wantFlagged bool
	}{
		{name: "clean", scanner: &fakeScanner{}},
		{name: "infected", scanner: &fakeScanner{verdict: files.Verdict{Infected: true, Signature: "Eicar"}}, code: "av_hit"},
		{name: "infected even when failing open", scanner: &fakeScanner{verdict: files.Verdict{Infected: true}}, failOpen: true, code: "av_hit"},
		{name: "unreachable fails closed", scanner: &fakeScanner{startErr: down}, code: "av_unavailable"},
		{name: "no verdict fails closed", scanner: &fakeScanner{verdictErr: down}, code: "av_unavailable"},
		{name: "unreachable fails open", scanner: &fakeScanner{startErr: down}, failOpen: true, wantFlagged: true},
		{name: "no verdict fails open", scanner: &fakeScanner{verdictErr: down}, failOpen: true, wantFlagged: true},
	}
	statuses := map[string]int{"av_hit": 422, "av_unavailable": 503}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *files.Config) { c.Scanner = tc.scanner; c.ScanFailOpen = tc.failOpen })
			data := []byte("scan me\n")
			f, err := h.upload(t, "acct", purposeAssistants, filePart("a.txt", data))
			if tc.code != "" {
				wantAPIError(t, err, statuses[tc.code], tc.code)
				h.wantStored(t, 0)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Flagged != tc.wantFlagged {
				t.Fatalf("Flagged = %v, want %v", f.Flagged, tc.wantFlagged)
			}
			if tc.scanner.startErr == nil && (len(tc.scanner.scanned) != 1 || !bytes.Equal(tc.scanner.scanned[0], data)) {
				t.Fatalf("scanner saw %q, want the file's content", tc.scanner.scanned)
			}
			h.wantStored(t, 1)
		})
	}
}

func TestUploadWithRealClamd(t *testing.T) {
	h := newHarness(t, func(c *files.Config) { c.Scanner = &files.Clamd{Addr: realClamdAddr(t)} })
	_, err := h.upload(t, "acct", purposeAssistants, filePart("eicar.txt", eicar()))
	wantAPIError(t, err, 422, "av_hit")
	h.wantStored(t, 0)
	h.mustUpload(t, "acct", purposeAssistants, filePart("fine.txt", []byte("nothing to see\n")))
	h.wantStored(t, 1)
}
