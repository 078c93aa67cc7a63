package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/switchyardhq/switchyard/files"
)

type accountKey struct{}

// serve starts the handler under /v3 behind a stand-in for
// authentication: the bearer token is the account id.
func serve(t *testing.T, h *harness) *httptest.Server {
	t.Helper()
	fh := files.NewHandler(files.HandlerConfig{
		Service: h.svc,
		Prefix:  "/v3",
		AccountID: func(ctx context.Context) (string, bool) {
			a, ok := ctx.Value(accountKey{}).(string)
			return a, ok
		},
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			r = r.WithContext(context.WithValue(r.Context(), accountKey{}, tok))
		}
		fh.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func client(srv *httptest.Server, account string) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v3/"), option.WithAPIKey(account), option.WithMaxRetries(0))
}

func TestOpenAIClient(t *testing.T) {
	h := newHarness(t)
	srv := serve(t, h)
	c := client(srv, "acct")
	ctx := context.Background()
	data := []byte("name,total\nA,1\n")

	up, err := c.Files.New(ctx, openai.FileNewParams{
		File:    openai.File(bytes.NewReader(data), "totals ✓.csv", "text/csv"),
		Purpose: openai.FilePurposeAssistants,
	})
	if err != nil {
		t.Fatalf("Files.New: %v", err)
	}
	if !files.ValidID(up.ID) || up.Bytes != int64(len(data)) || up.Filename != "totals ✓.csv" ||
		up.Purpose != "assistants" || up.Status != "processed" || up.ExpiresAt != up.CreatedAt+30*24*3600 {
		t.Fatalf("uploaded file object = %+v", up)
	}

	got, err := c.Files.Get(ctx, up.ID)
	if err != nil || got.ID != up.ID || got.Bytes != up.Bytes {
		t.Fatalf("Files.Get = %+v, %v", got, err)
	}

	h.clock.Advance(time.Second) // ids order by creation time at millisecond resolution
	second, err := c.Files.New(ctx, openai.FileNewParams{
		File:    openai.File(bytes.NewReader(pngBytes(t)), "pic.png", "image/png"),
		Purpose: openai.FilePurposeUserData,
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Files.List(ctx, openai.FileListParams{Limit: openai.Int(1), Order: openai.FileListParamsOrderAsc})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != up.ID || !page.HasMore {
		t.Fatalf("Files.List page 1 = %+v, %v", page, err)
	}
	var all []string
	iter := c.Files.ListAutoPaging(ctx, openai.FileListParams{Limit: openai.Int(1), Order: openai.FileListParamsOrderAsc})
	for iter.Next() {
		all = append(all, iter.Current().ID)
	}
	if iter.Err() != nil || len(all) != 2 || all[1] != second.ID {
		t.Fatalf("auto-paging listed %v, %v", all, iter.Err())
	}

	resp, err := c.Files.Content(ctx, up.ID)
	if err != nil {
		t.Fatalf("Files.Content: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, data) {
		t.Fatalf("content = %q, want %q", body, data)
	}

	del, err := c.Files.Delete(ctx, up.ID)
	if err != nil || !del.Deleted || del.ID != up.ID {
		t.Fatalf("Files.Delete = %+v, %v", del, err)
	}
	_, err = c.Files.Delete(ctx, up.ID)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "not_found" {
		t.Fatalf("second Files.Delete error = %v, want a 404 not_found", err)
	}

	// Another account sees nothing of this one.
	other := client(srv, "other")
	_, err = other.Files.Get(ctx, second.ID)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Fatalf("another account's Files.Get error = %v, want 404", err)
	}
}

func TestOpenAIClientErrors(t *testing.T) {
	h := newHarness(t, func(c *files.Config) { c.Profile.MaxUploadBytes = 100 })
	c := client(serve(t, h), "acct")
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		params  openai.FileNewParams
		status  int
		code    string
		errType string
	}{
		{"too large", openai.FileNewParams{File: openai.File(bytes.NewReader(make([]byte, 101)), "a.txt", "text/plain"), Purpose: "assistants"},
			413, "file_too_large", "invalid_request_error"},
		{"bad format", openai.FileNewParams{File: openai.File(strings.NewReader("%PDF-1.4"), "a.png", "image/png"), Purpose: "assistants"},
			400, "invalid_file_format", "invalid_request_error"},
		{"bad purpose", openai.FileNewParams{File: openai.File(strings.NewReader("x"), "a.txt", "text/plain"), Purpose: "fine-tune"},
			400, "invalid_purpose", "invalid_request_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Files.New(ctx, tc.params)
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Code != tc.code || apiErr.Type != tc.errType {
				t.Fatalf("Files.New error = %v, want %d %s", err, tc.status, tc.code)
			}
		})
	}
	h.wantStored(t, 0)
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func request(t *testing.T, method, url, account string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if account != "" {
		req.Header.Set("Authorization", "Bearer "+account)
	}
	return req
}

// envelopeCode decodes an error envelope, failing if b is not one.
func envelopeCode(t *testing.T, b []byte) string {
	t.Helper()
	var env struct {
		Error struct{ Message, Type, Code string } `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Error.Code == "" || env.Error.Type == "" || env.Error.Message == "" {
		t.Fatalf("not an error envelope: %s", b)
	}
	return env.Error.Code
}

func TestHTTPErrors(t *testing.T) {
	h := newHarness(t)
	srv := serve(t, h)
	f := h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))
	tests := []struct {
		name    string
		method  string
		path    string
		account string
		status  int
		code    string
	}{
		{"no account", "GET", "/v3/files", "", 401, "invalid_api_key"},
		{"unknown path", "GET", "/v3/filesystem", "acct", 404, "not_found"},
		{"outside the prefix", "GET", "/files", "acct", 404, "not_found"},
		{"too deep", "GET", "/v3/files/" + f.ID + "/content/x", "acct", 404, "not_found"},
		{"put on the collection", "PUT", "/v3/files", "acct", 405, "method_not_allowed"},
		{"post on a file", "POST", "/v3/files/" + f.ID, "acct", 405, "method_not_allowed"},
		{"delete content", "DELETE", "/v3/files/" + f.ID + "/content", "acct", 405, "method_not_allowed"},
		{"limit zero", "GET", "/v3/files?limit=0", "acct", 400, "invalid_limit"},
		{"limit over 10000", "GET", "/v3/files?limit=10001", "acct", 400, "invalid_limit"},
		{"limit not a number", "GET", "/v3/files?limit=ten", "acct", 400, "invalid_limit"},
		{"bad order", "GET", "/v3/files?order=random", "acct", 400, "invalid_order"},
		{"bad cursor", "GET", "/v3/files?after=xyz", "acct", 400, "invalid_after"},
		{"missing file", "GET", "/v3/files/file-000000000000000000000000", "acct", 404, "not_found"},
		{"malformed id", "GET", "/v3/files/%2e%2e", "acct", 404, "not_found"},
		{"another account's content", "GET", "/v3/files/" + f.ID + "/content", "other", 404, "not_found"},
		{"upload as JSON", "POST", "/v3/files", "acct", 400, "invalid_content_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, request(t, tc.method, srv.URL+tc.path, tc.account, strings.NewReader("{}")))
			if resp.StatusCode != tc.status || envelopeCode(t, body) != tc.code {
				t.Fatalf("%s %s = %d %s, want %d %s", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
		})
	}
}

func TestHTTPQuotaNotRetried(t *testing.T) {
	h := newHarness(t, func(c *files.Config) { c.Profile.MaxStoredFiles = 1 })
	srv := serve(t, h)
	h.mustUpload(t, "acct", purposeAssistants, filePart("a.txt", []byte("x")))
	ct, body := form(t, purposeAssistants, filePart("b.txt", []byte("y")))
	req := request(t, "POST", srv.URL+"/v3/files", "acct", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	resp, b := do(t, req)
	if resp.StatusCode != 409 || envelopeCode(t, b) != "max_files_reached" || resp.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("over quota: %d %s, X-Should-Retry %q", resp.StatusCode, b, resp.Header.Get("X-Should-Retry"))
	}
}

func TestHTTPDeclaredLengthTooLarge(t *testing.T) {
	h := newHarness(t, func(c *files.Config) { c.Profile.MaxUploadBytes = 100 })
	srv := serve(t, h)
	ct, body := form(t, purposeAssistants, filePart("a.txt", bytes.Repeat([]byte("x"), 70_000)))
	req := request(t, "POST", srv.URL+"/v3/files", "acct", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	if req.ContentLength <= h.svc.MaxRequestBytes() {
		t.Fatalf("test body of %d bytes is not over %d", req.ContentLength, h.svc.MaxRequestBytes())
	}
	resp, b := do(t, req)
	if resp.StatusCode != 413 || envelopeCode(t, b) != "file_too_large" {
		t.Fatalf("oversized request = %d %s", resp.StatusCode, b)
	}
	h.wantStored(t, 0)
}

func TestHTTPContent(t *testing.T) {
	h := newHarness(t)
	srv := serve(t, h)
	data := []byte("0123456789 a text file with a unicode name\n")
	f := h.mustUpload(t, "acct", purposeAssistants, filePart(`evil"name ✓.txt`, data))
	url := srv.URL + "/v3/files/" + f.ID + "/content"

	resp, body := do(t, request(t, "GET", url, "acct", nil))
	if resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("GET content = %d %q", resp.StatusCode, body)
	}
	wantHeaders := map[string]string{
		"Content-Type":           "text/plain; charset=utf-8",
		"Content-Disposition":    `attachment; filename="evil_name _.txt"; filename*=UTF-8''evil%22name%20%E2%9C%93.txt`,
		"X-Content-Type-Options": "nosniff",
		"Etag":                   `"` + f.SHA256 + `"`,
		"Accept-Ranges":          "bytes",
	}
	for k, v := range wantHeaders {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}

	req := request(t, "GET", url, "acct", nil)
	req.Header.Set("Range", "bytes=2-5")
	resp, body = do(t, req)
	if resp.StatusCode != 206 || string(body) != "2345" || resp.Header.Get("Content-Range") != "bytes 2-5/"+itoa(len(data)) {
		t.Fatalf("range request = %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Range"))
	}

	req = request(t, "GET", url, "acct", nil)
	req.Header.Set("If-None-Match", `"`+f.SHA256+`"`)
	if resp, _ = do(t, req); resp.StatusCode != 304 {
		t.Fatalf("conditional request = %d, want 304", resp.StatusCode)
	}

	resp, body = do(t, request(t, "HEAD", url, "acct", nil))
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(data)) {
		t.Fatalf("HEAD = %d, %d body bytes, length %d", resp.StatusCode, len(body), resp.ContentLength)
	}

	// Metadata and list shapes, as raw JSON.
	_, body = do(t, request(t, "GET", srv.URL+"/v3/files/"+f.ID, "acct", nil))
	var obj map[string]any
	json.Unmarshal(body, &obj)
	for _, k := range []string{"id", "object", "bytes", "created_at", "expires_at", "filename", "purpose", "status"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("file object lacks %q: %s", k, body)
		}
	}
	_, body = do(t, request(t, "GET", srv.URL+"/v3/files", "acct", nil))
	var list map[string]any
	json.Unmarshal(body, &list)
	if list["object"] != "list" || list["first_id"] != f.ID || list["last_id"] != f.ID || list["has_more"] != false {
		t.Fatalf("list envelope = %s", body)
	}
	_, body = do(t, request(t, "GET", srv.URL+"/v3/files", "nobody", nil))
	if !strings.Contains(string(body), `"data":[]`) || !strings.Contains(string(body), `"first_id":null`) {
		t.Fatalf("empty list = %s", body)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
