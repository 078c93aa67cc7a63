package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/switchyardhq/switchyard/admin/dashboard"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// chromiumPath is Debian's Chromium, which scripts/browser.sh installs.
const chromiumPath = "/usr/bin/chromium"

// browserTool returns node's path, or fails the test saying how to get
// what the browser test needs: it never skips.
func browserTool(t *testing.T) string {
	t.Helper()
	const fix = "run scripts/browser.sh (make test does) to install Debian's chromium and the pinned playwright-core"
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: the dashboard test drives Chromium from Node.js; %s", fix)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s is missing: %s", chromiumPath, fix)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "e2e", "dashboard", "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("e2e/dashboard/node_modules has no playwright-core: %s", fix)
	}
	return node
}

// artifactsDir is where the browser test leaves its screenshots:
// $SWITCHYARD_ARTIFACTS, else bin/artifacts, which git ignores.
// runDashboardScript runs e2e/dashboard/<script> with node and env (its
// DASHBOARD_URL, ADMIN_TOKEN, ARTIFACTS and so on) and returns the
// "done" event it ends with; the test fails when the script fails a
// check or is not done within limit.
func runDashboardScript(t *testing.T, node, script, artifacts string, limit time.Duration, env ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = filepath.Join(repoRoot, "e2e", "dashboard")
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %s\n%s", script, limit, stderr.String())
	}
	last := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	var done struct{ Event string }
	if err != nil || json.Unmarshal(last, &done) != nil || done.Event != "done" {
		t.Fatalf("%s: %v; screenshots in %s\n%s%s", script, err, artifacts, stdout.String(), stderr.String())
	}
	return last
}

func artifactsDir(t *testing.T, name string) string {
	t.Helper()
	base := os.Getenv("SWITCHYARD_ARTIFACTS")
	if base == "" {
		base = filepath.Join(repoRoot, "bin", "artifacts")
	}
	dir := filepath.Join(base, name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDashboardServesStrictStaticFiles checks what the dashboard's
// responses promise browsers: the CSP, no sniffing, caching by version,
// no inline script or style, and the API's envelope for what is not there.
func TestDashboardServesStrictStaticFiles(t *testing.T) {
	_, e := scriptedEnv(t)
	g := startGateway(t, e)

	status, h, index := g.do("GET", "/dashboard/", "", "")
	if status != http.StatusOK {
		t.Fatalf("GET /dashboard/: %d %s", status, index)
	}
	want := map[string]string{
		"Content-Security-Policy": dashboard.CSP,
		"X-Content-Type-Options":  "nosniff",
		"Content-Type":            "text/html; charset=utf-8",
		"Cache-Control":           "no-cache",
		"X-Frame-Options":         "DENY",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("index %s = %q, want %q", k, got, v)
		}
	}
	for _, directive := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';", "img-src 'self' data:", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(h.Get("Content-Security-Policy"), directive) {
			t.Errorf("the CSP lacks %s", directive)
		}
	}
	if regexp.MustCompile(`<script(\s[^>]*)?>[^<\s]`).MatchString(index) || !strings.Contains(index, `<script type="module" src="assets/`) {
		t.Errorf("index.html has an inline script or no module script:\n%s", index)
	}
	if regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=`).MatchString(index) {
		t.Errorf("index.html has an inline style or event handler:\n%s", index)
	}

	// The page names its assets under the build's version; those are
	// cached for good, an unversioned name is revalidated.
	m := regexp.MustCompile(`src="assets/([0-9a-f]{12})/app\.js"`).FindStringSubmatch(index)
	if m == nil {
		t.Fatalf("index.html does not load a versioned app.js:\n%s", index)
	}
	status, h, js := g.do("GET", "/dashboard/assets/"+m[1]+"/app.js", "", "")
	if status != http.StatusOK || h.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("Content-Security-Policy") != dashboard.CSP {
		t.Fatalf("versioned app.js: %d, %v", status, h)
	}
	if !strings.Contains(js, "import ") {
		t.Fatalf("app.js is not the dashboard's module: %.200s", js)
	}
	status, h, _ = g.do("GET", "/dashboard/assets/app.js", "", "", "If-None-Match", h.Get("ETag"))
	if status != http.StatusNotModified || h.Get("Cache-Control") != "no-cache" {
		t.Fatalf("unversioned app.js with its ETag: %d, Cache-Control %q; want 304, no-cache", status, h.Get("Cache-Control"))
	}

	for _, tc := range []struct{ method, path, code string }{
		{"GET", "/dashboard/nope.js", "not_found"},
		{"GET", "/dashboard/assets/", "not_found"},
		{"POST", "/dashboard/", "method_not_allowed"},
	} {
		status, h, body := g.do(tc.method, tc.path, "", "")
		if _, _, code := errorBody(t, body); code != tc.code || h.Get("Content-Security-Policy") == "" {
			t.Errorf("%s %s: %d %s, CSP %q; want %s", tc.method, tc.path, status, body, h.Get("Content-Security-Policy"), tc.code)
		}
	}
}

// browserEvent is one line the browser script writes.
type browserEvent struct {
	Event       string `json:"event"`
	Key         string `json:"key"`
	BeforeCents int64  `json:"before_cents"`
	AfterCents  int64  `json:"after_cents"`
}

// TestDashboardInBrowser signs in to the dashboard in headless Chromium
// with an operator token, tops up, creates a key with the keyboard alone,
// uses that key with the OpenAI client, sees the balance and usage move,
// deletes a file and revokes the key, which the gateway then refuses;
// without a CSP violation, console error or request to another origin.
// Screenshots are left in the artefacts directory.
func TestDashboardInBrowser(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard")
	up, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", "dashboard-test-secret-0123456789abcdef")
	const account = "acme"
	token := mustCLI(t, e, "admin", "token", "--operator", "--subject", "ops@example.com", "--ttl", "10m").lastLine()
	g := startGateway(t, e)
	for _, name := range []string{"globex", account} {
		if status, _, body := g.do("POST", "/admin/accounts", token, `{"name":"`+name+`","usd":"5.00"}`); status != http.StatusCreated {
			t.Fatalf("creating account %s: %d %s", name, status, body)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "run.mjs")
	cmd.Dir = filepath.Join(repoRoot, "e2e", "dashboard")
	cmd.Env = append(os.Environ(),
		"DASHBOARD_URL="+g.base+"/dashboard/",
		"ADMIN_TOKEN="+token,
		"ACCOUNT="+account,
		"ARTIFACTS="+artifacts,
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reply := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Errorf("writing to the browser script: %v", err)
		}
	}

	var key string
	var events []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var ev browserEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Errorf("browser script wrote %q", lines.Text())
			continue
		}
		events = append(events, ev.Event)
		switch ev.Event {
		case "topped_up":
			if ev.AfterCents-ev.BeforeCents != 2500 {
				t.Errorf("the page showed the balance go from %d to %d cents after a $25 top-up", ev.BeforeCents, ev.AfterCents)
			}
			if got := balanceCents(t, g, token, account); got != ev.AfterCents {
				t.Errorf("the page shows %d cents, the admin API %d", ev.AfterCents, got)
			}
		case "key":
			key = ev.Key
			filename := useKey(t, g, up, key)
			settleLedgers(t) // the page reloads next and must see the charge
			reply(map[string]string{"filename": filename})
		case "revoked":
			status, _, body := g.do("POST", "/v1/chat/completions", key, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
			if _, _, code := errorBody(t, body); status != http.StatusUnauthorized || code != "invalid_api_key" {
				t.Errorf("a key revoked in the dashboard: %d %s, want 401 invalid_api_key", status, body)
			}
			reply(map[string]string{})
		}
	}
	_ = stdin.Close()
	werr := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the browser script did not finish within 60s; events %v\n%s", events, stderr.String())
	}
	if werr != nil || len(events) == 0 || events[len(events)-1] != "done" {
		t.Fatalf("browser script: %v; events %v; screenshots in %s\n%s", werr, events, artifacts, stderr.String())
	}
	if key == "" {
		t.Fatal("the browser script never reported the key")
	}
	for _, name := range []string{"04-key-created", "05-overview", "08-narrow-overview"} {
		if _, err := os.Stat(filepath.Join(artifacts, name+".png")); err != nil {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", artifacts)
}

// useKey makes a chat completion and uploads a file with the key the
// dashboard showed, and returns the file's name.
func useKey(t *testing.T, g *gateway, up *testupstream.Server, key string) string {
	t.Helper()
	ctx := context.Background()
	up.Enqueue(testupstream.Text("Hello from the dashboard's key."))
	v1, v3 := openaiClient(g, key, "/v1"), openaiClient(g, key, "/v3")
	resp, err := v1.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "any-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil {
		t.Errorf("chat completion with the dashboard's key: %v", err)
		return ""
	}
	if got := resp.Choices[0].Message.Content; got != "Hello from the dashboard's key." {
		t.Errorf("chat completion answered %q", got)
	}
	const name = "dashboard-notes.txt"
	if _, err := v3.Files.New(ctx, openai.FileNewParams{
		File:    openai.File(strings.NewReader("notes for the dashboard test\n"), name, "text/plain"),
		Purpose: openai.FilePurposeAssistants,
	}); err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			t.Errorf("upload with the dashboard's key: %d %s", apiErr.StatusCode, apiErr.RawJSON())
		} else {
			t.Errorf("upload with the dashboard's key: %v", err)
		}
	}
	return name
}

// balanceCents reads an account's balance from the admin API.
func balanceCents(t *testing.T, g *gateway, token, account string) int64 {
	t.Helper()
	status, _, body := g.do("GET", "/admin/accounts/"+account, token, "")
	var a struct {
		BalanceCents *int64 `json:"balance_cents"`
	}
	if err := json.NewDecoder(io.LimitReader(strings.NewReader(body), 1<<20)).Decode(&a); err != nil || status != http.StatusOK || a.BalanceCents == nil {
		t.Fatalf("GET /admin/accounts/%s: %d %s", account, status, body)
	}
	return *a.BalanceCents
}
