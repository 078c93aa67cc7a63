package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMultipartPassesThroughUnread uploads a 64 MiB file as a multipart
// POST through /v1 and checks that it reaches the upstream byte for byte,
// and that the gateway streams it rather than buffering it: while the
// client holds back the last part of the file, most of what it sent has
// already reached the upstream, and the gateway's resident memory has
// grown by far less than the file.
//
// The scripted upstream keeps whole request bodies (and refuses those
// above 32 MiB), so the upstream here is a plain server that hashes the
// body as it arrives.
func TestMultipartPassesThroughUnread(t *testing.T) {
	const (
		fileSize  = 64 << 20
		pauseAt   = 48 << 20 // file bytes sent before the client holds back
		inFlight  = 16 << 20 // what buffers between client and upstream may hold
		maxGrowth = 32 << 20 // RSS growth allowed while the upload is in flight
	)

	up := newHashingUpstream(t)
	e := embeddedEnv(t, up.server.URL+"/v1")
	key := fundedKey(t, e, "uploader")
	g := startGateway(t, e, uploadRouteConfig(t))

	// A small upload first, so that what the gateway sets up on its first
	// proxied request is in the baseline.
	small := newMultipartUpload(t, 1<<10, -1)
	if status, body := small.send(g, key); status != http.StatusOK {
		t.Fatalf("small upload: %d %s", status, body)
	}
	if got := <-up.results; got.sum != small.sum() {
		t.Fatalf("small upload arrived as %d bytes with SHA-256 %s, sent %d bytes with %s", got.n, got.sum, small.size, small.sum())
	}
	before := vmRSS(t, g)

	big := newMultipartUpload(t, fileSize, pauseAt)
	type answer struct {
		status int
		body   string
	}
	answered := make(chan answer, 1)
	go func() {
		status, body := big.send(g, key)
		answered <- answer{status, body}
	}()

	select {
	case <-big.paused:
	case a := <-answered:
		t.Fatalf("the upload was answered before the client sent its whole body: %d %s", a.status, a.body)
	case <-time.After(10 * time.Second):
		t.Fatal("the client could not send 48 MiB within 10s")
	}
	sent := big.sent.Load()
	for deadline := time.Now().Add(5 * time.Second); up.received.Load() < sent-inFlight; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway buffers uploads: the client has sent %d MiB and waits, the upstream has received %d MiB",
				sent>>20, up.received.Load()>>20)
		}
	}
	receivedAtPause := up.received.Load()
	during := vmRSS(t, g)
	close(big.resume)

	var a answer
	select {
	case a = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the upload was not answered within 10s of the client sending its last byte")
	}
	if a.status != http.StatusOK || !strings.Contains(a.body, `"text"`) {
		t.Fatalf("upload: %d %s", a.status, a.body)
	}
	got := <-up.results
	if got.n != big.size || got.sum != big.sum() {
		t.Fatalf("the upstream received %d bytes with SHA-256 %s; the client sent %d bytes with %s", got.n, got.sum, big.size, big.sum())
	}
	if !strings.HasPrefix(got.contentType, "multipart/form-data; boundary=") {
		t.Errorf("upstream Content-Type %q", got.contentType)
	}
	t.Logf("gateway RSS %d MiB before the upload, %d MiB with %d MiB of it sent and %d MiB received upstream", before>>20, during>>20, sent>>20, receivedAtPause>>20)
	if during-before >= maxGrowth {
		t.Fatalf("the gateway's RSS grew by %d MiB while %d MiB of an upload were in flight: it buffers the body", (during-before)>>20, sent>>20)
	}
}

// uploadRouteConfig writes Caddyfile.example with POST /audio/transcriptions
// added to the routes switchyard_proxy passes upstream.
func uploadRouteConfig(t *testing.T) string {
	t.Helper()
	const anchor = "\t\t\tdial_timeout 10s" // in switchyard_proxy
	return writeConfig(t, exampleConfig(t, anchor, "\t\t\troutes POST /audio/transcriptions\n"+anchor))
}

// hashingUpstream answers POST /v1/audio/transcriptions after reading the
// body in small pieces, keeping only its length and SHA-256.
type hashingUpstream struct {
	server   *httptest.Server
	received atomic.Int64 // bytes of the current request's body read so far
	results  chan uploadResult
}

type uploadResult struct {
	n           int64
	sum         string
	contentType string
}

func newHashingUpstream(t *testing.T) *hashingUpstream {
	up := &hashingUpstream{results: make(chan uploadResult, 4)}
	up.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		up.received.Store(0)
		h := sha256.New()
		buf := make([]byte, 32<<10)
		var n int64
		for {
			k, err := r.Body.Read(buf)
			h.Write(buf[:k])
			n += int64(k)
			up.received.Store(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		up.results <- uploadResult{n: n, sum: hex.EncodeToString(h.Sum(nil)), contentType: r.Header.Get("Content-Type")}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"text":"transcribed"}`)
	}))
	t.Cleanup(up.server.Close)
	return up
}

// multipartUpload is a multipart/form-data body with one file of
// pseudo-random bytes, generated as it is sent and hashed on the way.
// With pauseAt >= 0 the body stops after pauseAt bytes of the file,
// closes paused, and goes on once resume is closed.
type multipartUpload struct {
	contentType    string
	prefix, suffix []byte
	fileSize       int64
	size           int64 // of the whole body
	pauseAt        int64
	paused, resume chan struct{}

	sent atomic.Int64 // body bytes handed to the client so far
	sha  []byte       // set once the body has been read to its end
}

func newMultipartUpload(t *testing.T, fileSize, pauseAt int64) *multipartUpload {
	t.Helper()
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if err := mw.WriteField("model", "whisper-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := mw.CreateFormFile("file", "meeting.wav"); err != nil {
		t.Fatal(err)
	}
	prefix := bytes.Clone(head.Bytes())
	head.Reset()
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	u := &multipartUpload{
		contentType: mw.FormDataContentType(),
		prefix:      prefix,
		suffix:      bytes.Clone(head.Bytes()),
		fileSize:    fileSize,
		pauseAt:     pauseAt,
		paused:      make(chan struct{}),
		resume:      make(chan struct{}),
	}
	u.size = int64(len(u.prefix)) + fileSize + int64(len(u.suffix))
	return u
}

// send posts the body to the upload route and returns the answer. It may
// run on another goroutine: it does not fail the test itself.
func (u *multipartUpload) send(g *gateway, key string) (int, string) {
	h := sha256.New()
	file := io.LimitReader(rand.NewChaCha8([32]byte{'u', 'p', 'l', 'o', 'a', 'd'}), u.fileSize)
	body := io.MultiReader(bytes.NewReader(u.prefix), &pausingReader{r: file, u: u}, bytes.NewReader(u.suffix))
	req, err := http.NewRequest("POST", g.base+"/v1/audio/transcriptions", io.TeeReader(body, h))
	if err != nil {
		return 0, err.Error()
	}
	req.ContentLength = u.size
	req.Header.Set("Content-Type", u.contentType)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	u.sha = h.Sum(nil)
	return resp.StatusCode, string(b)
}

// sum is the SHA-256 of the body sent, once send has returned.
func (u *multipartUpload) sum() string { return hex.EncodeToString(u.sha) }

// pausingReader reads the file part, counting what the client has sent
// and waiting at pauseAt.
type pausingReader struct {
	r    io.Reader
	u    *multipartUpload
	read int64
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if p.u.pauseAt >= 0 && p.read == p.u.pauseAt {
		close(p.u.paused)
		<-p.u.resume
		p.u.pauseAt = -1
	}
	if p.u.pauseAt >= 0 {
		b = b[:min(int64(len(b)), p.u.pauseAt-p.read)]
	}
	n, err := p.r.Read(b)
	p.read += int64(n)
	p.u.sent.Store(int64(len(p.u.prefix)) + p.read)
	return n, err
}

// vmRSS is the gateway process's resident set size in bytes.
func vmRSS(t *testing.T, g *gateway) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", g.cmd.Process.Pid)
	return 0
}
