package e2e

// Tools of the fault suite: a TCP proxy that can cut every connection
// between the gateway and PostgreSQL, a Redis of the test's own that can
// be stopped and started again on the same port, and the checks run after
// every fault (envelopes, leases, holds, orphans).

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// cutProxy relays TCP connections to target until it is cut. Cutting
// closes every relayed connection and refuses new ones (the listener
// stays bound, so the port cannot be taken by anything else, but every
// accepted connection is closed at once): from the gateway's side this is
// what a database restart looks like, with no risk to the shared server
// behind it.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *cutProxy) relay(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil || !p.track(up) {
		c.Close()
		if up != nil {
			up.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// setCut cuts (true) or restores (false) the link.
func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// proxiedDSN is dsn with its host and port replaced by the proxy's.
func proxiedDSN(t *testing.T, dsn string, p *cutProxy) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(dsn, net.JoinHostPort(cfg.Host, itoa(int(cfg.Port))), p.addr(), 1)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// redisProc is a redis-server of the test's own on a fixed port, which
// the test may stop and start again: a restart loses every key, as a
// Redis without persistence does.
type redisProc struct {
	t    *testing.T
	addr string
	dir  string
	cmd  *exec.Cmd
}

func startRedisProc(t *testing.T) *redisProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: run `make test`, which installs it, or apt-get install redis-server")
	}
	r := &redisProc{t: t, addr: testenv.FreeAddr(t), dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisProc) url() string { return "redis://" + r.addr + "/0" }

func (r *redisProc) start() {
	r.t.Helper()
	host, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command("redis-server", "--bind", host, "--port", port, "--save", "", "--appendonly", "no", "--dir", r.dir)
	r.cmd.SysProcAttr = testenv.KillWithParent()
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", r.addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatal("redis-server did not start")
		}
	}
}

func (r *redisProc) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// leftovers lists the stream leases and balance holds still recorded
// under prefix in Redis: after every holder is gone and one lease TTL has
// passed, there must be none.
func leftovers(t *testing.T, redisURL, prefix string) []string {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	iter := c.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if !strings.HasSuffix(k, ":streams") && !strings.HasSuffix(k, ":holds") {
			continue
		}
		// Members are scored by their expiry, in seconds since 2017 (the
		// limiter's epoch); those past it no longer count, and the next
		// admission on the key removes them.
		now := float64(time.Now().UnixMicro())/1e6 - 1483228800
		live, err := c.ZCount(ctx, k, "("+formatFloat(now), "+inf").Result()
		if err != nil {
			t.Fatal(err)
		}
		if live > 0 {
			members, _ := c.ZRangeWithScores(ctx, k, 0, -1).Result()
			for _, m := range members {
				out = append(out, k+" "+m.Member.(string))
			}
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func formatFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// documentedCodes are the error codes of docs/errors.md that faults may
// produce; anything else a client sees during a fault is a finding.
var documentedCodes = map[string]bool{
	"upstream_unavailable": true, "upstream_error": true, "upstream_timeout": true,
	"stream_interrupted": true, "service_unavailable": true, "server_overloaded": true,
	"internal_error": true, "rate_limit_exceeded": true, "insufficient_balance": true,
}

// envelopeCode checks that body is the spec's error envelope with a
// documented code, and returns the code.
func envelopeCode(t *testing.T, what string, status int, body string) string {
	t.Helper()
	_, _, code := errorBody(t, body)
	if !documentedCodes[code] {
		t.Fatalf("%s: %d with code %q, which docs/errors.md does not list for this fault: %s", what, status, code, body)
	}
	t.Logf("%s: %d %s", what, status, code)
	return code
}

// streamErrorFrame returns the error envelope of the data frame that ends
// a stream cut by a fault, or fails when the stream ended otherwise.
func streamErrorFrame(t *testing.T, what, stream string) string {
	t.Helper()
	var last string
	for _, line := range strings.Split(stream, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "[DONE]" {
			last = data
		}
	}
	if !strings.Contains(last, `"error"`) {
		t.Fatalf("%s: the stream ended without an error frame; its last frame was %q", what, last)
	}
	return envelopeCode(t, what, 200, last)
}

// timedDo sends a request and fails when it takes longer than limit: the
// fault suite's hang detector.
func timedDo(t *testing.T, limit time.Duration, req *http.Request) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), limit)
	defer cancel()
	began := time.Now()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s %s hung: no answer within %s", req.Method, req.URL.Path, limit)
		}
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if errors.Is(err, context.DeadlineExceeded) || (err != nil && time.Since(began) >= limit) {
		t.Fatalf("%s %s hung: the body did not end within %s (read %q)", req.Method, req.URL.Path, limit, b)
	}
	return resp.StatusCode, string(b)
}

// blobFiles lists the blobs stored under a data dir's files directory,
// staged writes included.
func blobFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dataDir, "files")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			out = append(out, strings.TrimPrefix(path, root+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fileRows counts the rows of the files table, pending ones included.
func fileRows(t *testing.T, dsn string) int {
	t.Helper()
	return pgCount(t, dsn, `SELECT count(*) FROM files`)
}

// lookPath finds a tool the suite needs, or fails saying so.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (util-linux): the fault suite needs it", name)
	}
	return p
}
