// Package e2e runs the real switchyard binary, configured by the real
// Caddyfile.example, on random loopback ports in front of the scripted
// upstream, and talks to it as clients and operators do: over HTTP, with
// the official OpenAI SDK, and through the CLI.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// bin is the switchyard binary under test: $SWITCHYARD_BIN (make test
// builds it), else one built for this run.
var bin string

// repoRoot holds Caddyfile.example.
var repoRoot string

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	bin = os.Getenv("SWITCHYARD_BIN")
	cleanup := func() {}
	if bin == "" {
		dir, err := os.MkdirTemp("", "switchyard-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cleanup = func() { os.RemoveAll(dir) }
		bin = filepath.Join(dir, "switchyard")
		build := exec.Command("go", "build", "-o", bin, "./cmd/switchyard")
		build.Dir = repoRoot
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building switchyard:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// env is the environment of one gateway deployment: the variables of the
// operator contract plus the ports a test picked.
type env map[string]string

// embeddedEnv is a deployment on the embedded defaults with its own data
// dir and upstream.
func embeddedEnv(t *testing.T, upstream string) env {
	t.Helper()
	return env{
		"SWITCHYARD_DATA_DIR": t.TempDir(),
		"SWITCHYARD_UPSTREAM": upstream,
		"SWITCHYARD_REVISION": "B",
	}
}

func (e env) with(kv ...string) env {
	out := make(env, len(e)+len(kv)/2)
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func (e env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWITCHYARD_") {
			out = append(out, kv)
		}
	}
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

// gateway is a running switchyard process.
type gateway struct {
	t     *testing.T
	env   env
	base  string // http://127.0.0.1:port
	admin string // 127.0.0.1:port
	cmd   *exec.Cmd
	log   *syncBuffer
	done  chan struct{}
	// logTail, when positive, is how much of the end of the log stop
	// shows for a failed test: a long run's whole log would bury the
	// failure. 0 shows all of it.
	logTail int
}

// startGateway runs `switchyard run` with Caddyfile.example (or config, a
// Caddyfile path, when given) and waits until it answers.
func startGateway(t *testing.T, e env, config ...string) *gateway {
	t.Helper()
	cfg := filepath.Join(repoRoot, "Caddyfile.example")
	if len(config) > 0 {
		cfg = config[0]
	}
	addrs := testenv.FreeAddrs(t, 2)
	listen, admin := addrs[0], addrs[1]
	e = e.with("SWITCHYARD_LISTEN", listen, "SWITCHYARD_ADMIN", admin)
	g := &gateway{t: t, env: e, base: "http://" + listen, admin: admin, log: new(syncBuffer), done: make(chan struct{})}
	g.cmd = exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	g.cmd.Env = e.environ()
	g.cmd.Dir = t.TempDir()
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	g.cmd.SysProcAttr = testenv.KillWithParent()
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	t.Cleanup(g.stop)
	running.add(g)

	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(g.base + "/")
		if err == nil {
			resp.Body.Close()
			return g
		}
		select {
		case <-g.done:
			t.Fatalf("gateway exited during start:\n%s", g.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not answer within 30s:\n%s", g.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exampleConfig is Caddyfile.example with edits: old, new pairs, each old
// string replaced. Each must stand exactly once in the file, so that an
// edit the file no longer fits fails the test instead of quietly testing
// the unchanged config.
func exampleConfig(t *testing.T, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if n := strings.Count(cfg, edits[i]); n != 1 {
			t.Fatalf("Caddyfile.example has %d of %q, want one to edit", n, edits[i])
		}
		cfg = strings.Replace(cfg, edits[i], edits[i+1], 1)
	}
	return cfg
}

// writeConfig writes cfg to a Caddyfile of the test's own and returns its
// path.
func writeConfig(t *testing.T, cfg string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stop ends the process gracefully, and shows its log if the test failed.
func (g *gateway) stop() {
	defer running.remove(g)
	select {
	case <-g.done:
	default:
		_ = g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.done:
		case <-time.After(15 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.done
		}
	}
	if g.t.Failed() {
		log := g.log.String()
		if g.logTail > 0 && len(log) > g.logTail {
			log = "[...]" + log[len(log)-g.logTail:]
		}
		g.t.Logf("gateway log:\n%s", log)
	}
}

// kill ends the process at once, as a crash would.
func (g *gateway) kill() {
	running.remove(g)
	_ = g.cmd.Process.Kill()
	<-g.done
}

// newRequest builds a request to the gateway, with Authorization for a
// key if one is given and a body sent as JSON.
func newRequest(t *testing.T, g *gateway, method, path, key, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, g.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}

// do sends a request with an optional key and returns status and body.
func (g *gateway) do(method, path, key string, body string, header ...string) (int, http.Header, string) {
	g.t.Helper()
	req := newRequest(g.t, g, method, path, key, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// load replaces the running config through the admin API, reloading it
// even when it is the running one: Caddy would skip that unless told
// otherwise.
func (g *gateway) load(caddyfile string) {
	g.t.Helper()
	req, _ := http.NewRequest("POST", "http://"+g.admin+"/load", strings.NewReader(caddyfile))
	req.Header.Set("Content-Type", "text/caddyfile")
	req.Header.Set("Cache-Control", "must-revalidate")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		g.t.Fatalf("reload: %d %s", resp.StatusCode, b)
	}
}

// cliResult is what a CLI invocation printed.
type cliResult struct {
	stdout, stderr string
	code           int
}

// lastLine is the last non-empty line of stdout.
func (r cliResult) lastLine() string {
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	return lines[len(lines)-1]
}

// cli runs a switchyard subcommand in the deployment's environment.
func cli(t *testing.T, e env, args ...string) cliResult {
	t.Helper()
	settleLedgers(t) // the CLI reads the ledger: let it see every charge made
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("switchyard %v: %v", args, err)
	}
	return res
}

// mustCLI runs a subcommand that must succeed.
func mustCLI(t *testing.T, e env, args ...string) cliResult {
	t.Helper()
	r := cli(t, e, args...)
	if r.code != 0 {
		t.Fatalf("switchyard %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// newKey creates a key for account through the CLI.
func newKey(t *testing.T, e env, account string) string {
	t.Helper()
	key := mustCLI(t, e, "keys", "create", "--account", account).lastLine()
	if !strings.HasPrefix(key, "sk-") {
		t.Fatalf("keys create printed %q as its last line", key)
	}
	return key
}

// scriptedEnv starts a scripted upstream of the test's own and returns it
// with a deployment on the embedded defaults in front of it, with the
// variables of extra (name, value pairs).
func scriptedEnv(t *testing.T, extra ...string) (*testupstream.Server, env) {
	t.Helper()
	up := testupstream.Start(t, demobackend.Options{})
	return up, embeddedEnv(t, up.URL()).with(extra...)
}

// fundedGateway starts a gateway of scriptedEnv with a funded key of
// account.
func fundedGateway(t *testing.T, account string, extra ...string) (*testupstream.Server, env, string, *gateway) {
	t.Helper()
	up, e := scriptedEnv(t, extra...)
	key := fundedKey(t, e, account)
	return up, e, key, startGateway(t, e)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fundedKey creates a key for account and credits the account with $10, so
// that requests pass the balance gate.
func fundedKey(t *testing.T, e env, account string) string {
	t.Helper()
	key := newKey(t, e, account)
	mustCLI(t, e, "accounts", "topup", "--account", account, "--usd", "10", "--reference", "fund-"+account)
	return key
}
