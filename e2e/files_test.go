package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/storage/blob/blobtest"
)

// fileBackends runs f on the embedded store with local blobs, on
// PostgreSQL with local blobs, and on PostgreSQL with an S3 bucket. cfg
// holds extra switchyard lines; blobs are added for the S3 case.
func fileBackends(t *testing.T, f func(t *testing.T, e env, cfg string)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, embeddedEnv(t, "http://127.0.0.1:1/v1"), "")
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, distributedEnv(t, "http://127.0.0.1:1/v1"), "")
	})
	t.Run("postgres+s3", func(t *testing.T) {
		f(t, distributedEnv(t, "http://127.0.0.1:1/v1"), "files {\n\t\t\tblobs "+blobtest.FakeS3(t)+"\n\t\t}")
	})
}

func startFilesGateway(t *testing.T, e env, cfg string, more ...string) *gateway {
	t.Helper()
	lines := append([]string{}, more...)
	if cfg != "" {
		lines = append(lines, cfg)
	}
	if len(lines) == 0 {
		return startGateway(t, e)
	}
	return startGateway(t, e, switchyardConfig(t, lines...))
}

func TestFilesWithOpenAIClient(t *testing.T) {
	fileBackends(t, func(t *testing.T, e env, cfg string) {
		key := fundedKey(t, e, "filer")
		otherKey := fundedKey(t, e, "snoop")
		g := startFilesGateway(t, e, cfg)
		client := openaiClient(g, key, "/v3")
		other := openaiClient(g, otherKey, "/v3")
		ctx := context.Background()

		data := []byte("region,total\nnorth,12\nsouth,30\n")
		up, err := client.Files.New(ctx, openai.FileNewParams{
			File:    openai.File(bytes.NewReader(data), "totals.csv", "text/csv"),
			Purpose: openai.FilePurposeAssistants,
		})
		if err != nil {
			t.Fatalf("upload: %v", err)
		}
		if !strings.HasPrefix(up.ID, "file-") || up.Bytes != int64(len(data)) || up.Filename != "totals.csv" ||
			up.ExpiresAt != up.CreatedAt+30*24*3600 {
			t.Fatalf("uploaded file %+v", up)
		}

		page, err := client.Files.List(ctx, openai.FileListParams{})
		if err != nil || len(page.Data) != 1 || page.Data[0].ID != up.ID {
			t.Fatalf("list: %v %+v", err, page)
		}
		got, err := client.Files.Get(ctx, up.ID)
		if err != nil || got.ID != up.ID || got.Bytes != up.Bytes {
			t.Fatalf("get: %v %+v", err, got)
		}
		resp, err := client.Files.Content(ctx, up.ID)
		if err != nil {
			t.Fatalf("content: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(body, data) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("content %q (%s)", body, resp.Header.Get("Content-Type"))
		}

		// Another account sees nothing, exactly as if the file did not exist.
		if _, err := other.Files.Get(ctx, up.ID); !isStatus(err, 404) {
			t.Fatalf("another account's get: %v", err)
		}
		if _, err := other.Files.Delete(ctx, up.ID); !isStatus(err, 404) {
			t.Fatalf("another account's delete: %v", err)
		}
		if page, err := other.Files.List(ctx, openai.FileListParams{}); err != nil || len(page.Data) != 0 {
			t.Fatalf("another account's list: %v %+v", err, page)
		}
		// A cursor naming another account's file is only a position: it
		// answers exactly as a cursor naming no file at all.
		for _, after := range []string{up.ID, "file-" + strings.Repeat("A", 24)} {
			page, err := other.Files.List(ctx, openai.FileListParams{After: openai.String(after)})
			if err != nil || len(page.Data) != 0 {
				t.Fatalf("after=%s for another account: %v %+v", after, err, page)
			}
		}

		del, err := client.Files.Delete(ctx, up.ID)
		if err != nil || !del.Deleted || del.ID != up.ID {
			t.Fatalf("delete: %v %+v", err, del)
		}
		if _, err := client.Files.Delete(ctx, up.ID); !isStatus(err, 404) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := client.Files.Get(ctx, up.ID); !isStatus(err, 404) {
			t.Fatalf("get after delete: %v", err)
		}
	})
}

func TestFileUploadRefusals(t *testing.T) {
	fileBackends(t, func(t *testing.T, e env, cfg string) {
		key := fundedKey(t, e, "careless")
		g := startFilesGateway(t, e, cfg)

		tests := []struct {
			name        string
			contentType string
			body        string
			status      int
			code        string
		}{
			{"no file", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nassistants\r\n--B--\r\n", 400, ""},
			{"not multipart", "application/json", `{"purpose":"assistants"}`, 415, "unsupported_media_type"},
			{"malformed", "multipart/form-data; boundary=B", "--B\r\ngarbage", 400, ""},
			{"png that is text", "multipart/form-data; boundary=B", multipartBody("B", "x.png", "hello"), 400, "invalid_file_format"},
			{"path in filename", "multipart/form-data; boundary=B", multipartBody("B", "../../etc/passwd.txt", "hello"), 200, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, _, body := g.do("POST", "/v3/files", key, tt.body, "Content-Type", tt.contentType)
				if tt.status != 200 {
					wantError(t, "upload", status, body, tt.status, tt.code, "")
					return
				}
				if status != tt.status {
					t.Fatalf("status %d, want %d: %s", status, tt.status, body)
				}
				if strings.Contains(body, "..") || strings.Contains(body, "/etc") {
					t.Errorf("the stored filename kept its path: %s", body)
				}
			})
		}
		// Only the accepted upload is there.
		_, _, list := g.do("GET", "/v3/files", key, "")
		if n := strings.Count(list, `"object":"file"`); n != 1 {
			t.Fatalf("%d files after the refusals, want 1: %s", n, list)
		}
		for _, bad := range []string{"limit=0", "limit=10001", "order=sideways"} {
			if status, _, body := g.do("GET", "/v3/files?"+bad, key, ""); status != 400 {
				t.Errorf("%s: %d %s", bad, status, body)
			}
		}
		for _, id := range []string{"file-'; DROP TABLE files;--", "file-..%2F..%2Fetc", "nope"} {
			if status, _, body := g.do("GET", "/v3/files/"+url.PathEscape(id), key, ""); status != 404 {
				t.Errorf("id %q: %d %s", id, status, body)
			}
		}
	})
}

func multipartBody(boundary, filename, content string) string {
	return fmt.Sprintf("--%[1]s\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nassistants\r\n"+
		"--%[1]s\r\nContent-Disposition: form-data; name=\"file\"; filename=%[2]q\r\nContent-Type: application/octet-stream\r\n\r\n%[3]s\r\n--%[1]s--\r\n",
		boundary, filename, content)
}

// TestFileQuotaUnderConcurrency races 20 uploads against room for two more
// files: exactly two may win, on every backend.
func TestFileQuotaUnderConcurrency(t *testing.T) {
	fileBackends(t, func(t *testing.T, e env, cfg string) {
		key := fundedKey(t, e, "racer")
		g := startFilesGateway(t, e, cfg, "limits {\n\t\t\tstored_files 5\n\t\t}")
		for i := 0; i < 3; i++ {
			if status, _, body := g.do("POST", "/v3/files", key, multipartBody("B", fmt.Sprintf("f%d.txt", i), "x"),
				"Content-Type", "multipart/form-data; boundary=B"); status != 200 {
				t.Fatalf("upload %d: %d %s", i, status, body)
			}
		}
		var ok, refused atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", g.base+"/v3/files", strings.NewReader(multipartBody("B", fmt.Sprintf("r%d.txt", i), "racing")))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "multipart/form-data; boundary=B")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case 200:
					ok.Add(1)
				case 409:
					refused.Add(1)
				default:
					t.Errorf("status %d: %s", resp.StatusCode, b)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != 2 || refused.Load() != 18 {
			t.Fatalf("%d uploads admitted, %d refused; want 2 and 18", ok.Load(), refused.Load())
		}
		_, _, list := g.do("GET", "/v3/files", key, "")
		if n := strings.Count(list, `"object":"file"`); n != 5 {
			t.Fatalf("%d files stored, want 5", n)
		}
	})
}

// startClamd runs a private clamd with a signature for the EICAR test file
// (scripts/clamd-test.sh) and returns its address. Its cleanup is
// registered before clamd is started, so that no failure leaves it
// running; its directory outlives a failed test, and the test prints its
// log, so that the log a failure names still exists.
func startClamd(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "clamd-test-")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(repoRoot, "scripts", "clamd-test.sh")
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping clamd: %v %s", err, out)
		}
		if !t.Failed() {
			_ = os.RemoveAll(dir)
			return
		}
		log, _ := os.ReadFile(filepath.Join(dir, "clamd.log"))
		t.Logf("clamd kept its directory %s; clamd.log:\n%s", dir, log)
	})
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("starting clamd: %s (make test installs clamav-daemon)", exit.Stderr)
		}
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// eicar is the standard antivirus test file, assembled at run time so that
// this source is not itself flagged.
func eicar() string {
	return `X5O!P%@AP[4\PZX54(P^)7CC)7}$` + `EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`
}

func TestMalwareScan(t *testing.T) {
	clamd := startClamd(t)
	e := embeddedEnv(t, "http://127.0.0.1:1/v1").with("SWITCHYARD_CLAMD_ADDR", clamd)
	key := fundedKey(t, e, "scanned")
	g := startGateway(t, e)
	upload := func(g *gateway, name, content string) (int, string) {
		status, _, body := g.do("POST", "/v3/files", key, multipartBody("B", name, content),
			"Content-Type", "multipart/form-data; boundary=B")
		return status, body
	}

	if status, body := upload(g, "clean.txt", "nothing to see"); status != 200 {
		t.Fatalf("clean file: %d %s", status, body)
	}
	status, body := upload(g, "eicar.txt", eicar())
	wantError(t, "EICAR", status, body, 422, "av_hit", "")
	_, _, list := g.do("GET", "/v3/files", key, "")
	if n := strings.Count(list, `"object":"file"`); n != 1 {
		t.Fatalf("%d files after a scan hit, want 1: %s", n, list)
	}

	// clamd unreachable: refused by default, kept when failing open.
	down := e.with("SWITCHYARD_CLAMD_ADDR", "tcp://"+testenv.FreeAddr(t))
	closed := startGateway(t, down)
	if status, body := upload(closed, "x.txt", "hello"); status != 503 || !strings.Contains(body, "av_unavailable") {
		t.Fatalf("clamd down, fail_closed: %d %s", status, body)
	}
	open := startGateway(t, down, switchyardConfig(t, "files {\n\t\t\tscan_policy fail_open\n\t\t}"))
	if status, body := upload(open, "y.txt", "hello"); status != 200 {
		t.Fatalf("clamd down, fail_open: %d %s", status, body)
	}
}
