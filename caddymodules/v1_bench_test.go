package caddymodules

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// BenchmarkV1JSON serves the bench's /v1 JSON request through Caddy in
// this process: Caddyfile.example as shipped (its access log, Caddy's
// metrics, switchyard_auth, _limits, _meter and _proxy on the embedded
// store), with the limits raised out of the way as bench/ raises them,
// and beside it a plain reverse_proxy site (plain), both in front of
// one local upstream that answers at once. Requests go through each
// server's ServeHTTP; the upstream is reached over loopback. What
// switchyard costs over plain is the gateway's per request, its ledger
// writer's work in the background included.
//
//	go test ./caddymodules -run '^$' -bench V1JSON -benchmem -cpuprofile cpu.pprof
func BenchmarkV1JSON(b *testing.B) {
	discardStderr(b)
	plain, gateway, key := loadV1Bench(b, drainingUpstream(b))
	for _, c := range []struct {
		name string
		srv  *caddyhttp.Server
	}{{"plain", plain}, {"switchyard", gateway}} {
		b.Run(c.name, func(b *testing.B) { benchServe(b, c.srv, key, 1) })
	}
}

// benchServe serves the bench's /v1 JSON request with key through srv
// b.N times from clients goroutines, after 200 to warm the key cache and
// the connections, and reports the process's CPU per request besides the
// allocations.
func benchServe(b *testing.B, srv *caddyhttp.Server, key string, clients int) {
	req := func() *http.Request {
		r := benchRequest()
		r.Header.Set("Authorization", "Bearer "+key)
		// As the server reads it off the wire.
		r.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		return r
	}
	for range 200 {
		w := httptest.NewRecorder()
		if srv.ServeHTTP(w, req()); w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	var refused atomic.Int64
	serve := func() {
		w := &benchWriter{header: make(http.Header)}
		if srv.ServeHTTP(w, req()); w.status != http.StatusOK {
			refused.Add(1)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	before := processCPU(b)
	if clients == 1 {
		for b.Loop() {
			serve()
		}
	} else {
		b.SetParallelism(max(clients/runtime.GOMAXPROCS(0), 1))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				serve()
			}
		})
	}
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
	if n := refused.Load(); n > 0 {
		b.Fatalf("%d of %d requests were not answered 200", n, b.N)
	}
}

// benchWriter is a response writer like the server's own, in what the
// handlers ask of it: it takes deadlines and flushes, which
// httptest.ResponseRecorder refuses with an error made anew each time,
// and does not copy the headers when they are written.
type benchWriter struct {
	header http.Header
	status int
}

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}

func (w *benchWriter) Flush()                           {}
func (w *benchWriter) SetReadDeadline(time.Time) error  { return nil }
func (w *benchWriter) SetWriteDeadline(time.Time) error { return nil }

// drainingUpstream is an upstream that reads a request's body whole and
// answers the bench's chat completion; it returns its address.
func drainingUpstream(tb testing.TB) string {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(benchAnswerBody)))
		_, _ = w.Write(benchAnswerBody)
	}))
	tb.Cleanup(up.Close)
	return up.Listener.Addr().String()
}

// loadV1Bench loads Caddyfile.example, its limits raised, with a plain
// reverse_proxy site beside it, both in front of the upstream at
// upAddr, and returns both servers and a funded key of the gateway.
func loadV1Bench(b testing.TB, upAddr string) (plain, gateway *caddyhttp.Server, key string) {
	b.Helper()
	plainPort := setV1BenchEnv(b, upAddr)
	example, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		b.Fatal(err)
	}
	plain, gateway = loadV1BenchConfig(b, string(example), benchLimits, upAddr, plainPort)
	return plain, gateway, fundedKey(b, "bench")
}

// setV1BenchEnv sets the gateway's settings for loadV1BenchConfig, in front
// of the upstream at upAddr, and returns the port of the plain site.
func setV1BenchEnv(b testing.TB, upAddr string) (plainPort string) {
	b.Helper()
	addrs := testenv.FreeAddrs(b, 3)
	_, port, _ := net.SplitHostPort(addrs[0])
	b.Setenv("SWITCHYARD_LISTEN", addrs[0])
	b.Setenv("SWITCHYARD_LISTEN_PORT", port)
	b.Setenv("SWITCHYARD_ADMIN", addrs[2])
	b.Setenv("SWITCHYARD_DATA_DIR", b.TempDir())
	b.Setenv("SWITCHYARD_UPSTREAM", "http://"+upAddr+"/v1")
	b.Setenv("SWITCHYARD_UPSTREAM_MODEL", "switchyard-demo")
	b.Setenv("SWITCHYARD_REVISION", "B")
	_, plainPort, _ = net.SplitHostPort(addrs[1])
	return plainPort
}

// benchLimits are the limits loadV1Bench sets: a window of 10 ms as
// bench/ has, and room for a fast machine.
const benchLimits = "requests 1000 10ms\nstreams 100000"

// loadV1BenchConfig loads the Caddyfile cfg with limits, one setting a
// line, in its switchyard global block, and a plain reverse_proxy site
// on plainPort beside it, and returns both servers.
func loadV1BenchConfig(b testing.TB, cfg, limits, upAddr, plainPort string) (plain, gateway *caddyhttp.Server) {
	b.Helper()
	block := "\tswitchyard {\n\t\tlimits {\n\t\t\t" + strings.ReplaceAll(limits, "\n", "\n\t\t\t") + "\n\t\t}"
	raised := strings.Replace(cfg, "\tswitchyard {", block, 1)
	if raised == cfg {
		b.Fatal("the Caddyfile has no switchyard global block to raise the limits in")
	}
	raised += "\nhttp://:" + plainPort + " {\n\tbind 127.0.0.1\n\treverse_proxy " + upAddr + "\n}\n"
	js, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(raised), nil)
	if err != nil {
		b.Fatalf("adapting the Caddyfile: %v (%v)", err, warnings)
	}
	if err := caddy.Load(js, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = caddy.Stop() })
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		b.Fatal(err)
	}
	for _, srv := range app.(*caddyhttp.App).Servers {
		if len(srv.Listen) == 1 && strings.HasSuffix(srv.Listen[0], ":"+plainPort) {
			plain = srv
		} else {
			gateway = srv
		}
	}
	if plain == nil || gateway == nil {
		b.Fatal("the gateway's and the plain server were not both loaded")
	}
	return plain, gateway
}

// fundedKey issues a key of a new account funded with $1,000 on the
// store of the config Caddy has loaded, as the gateway's settings from
// the environment name it: the benchmarks' caller.
func fundedKey(b testing.TB, name string) string {
	key, _ := fundedAccount(b, name)
	return key
}

// fundedAccount is fundedKey, with the key's account.
func fundedAccount(b testing.TB, name string) (key, accountID string) {
	b.Helper()
	ctx := context.Background()
	store := openStore(b)
	defer store.Close()
	s, err := (&App{}).resolve()
	if err != nil {
		b.Fatal(err)
	}
	if err := s.LoadKeySecret(); err != nil {
		b.Fatal(err)
	}
	hasher, err := policy.NewKeyHasher(s.KeySecret)
	if err != nil {
		b.Fatal(err)
	}
	key, rec, err := policy.IssueKey(ctx, store, hasher, s.Profile, name, "")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := billing.TopUp(ctx, store, s.Profile, rec.AccountID, 100_000, "fund-"+name, ""); err != nil {
		b.Fatal(err)
	}
	return key, rec.AccountID
}

// openStore opens the store of the config Caddy has loaded, as the
// gateway's settings from the environment name it.
func openStore(b testing.TB) storage.Store {
	b.Helper()
	s, err := (&App{}).resolve()
	if err != nil {
		b.Fatal(err)
	}
	store, err := node.OpenStore(context.Background(), s)
	if err != nil {
		b.Fatal(err)
	}
	return store
}

// The upstream's own rate-limit headers and request id describe the
// operator's account with the backend: on /v1 through
// Caddyfile.example the client sees the gateway's under those names,
// once each, and none of the upstream's.
func TestV1UpstreamHeadersStayBehind(t *testing.T) {
	discardStderr(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Request-Id", "req-upstream")
		h.Set("X-Ratelimit-Limit-Requests", "999999")
		h.Set("X-Ratelimit-Remaining-Tokens", "123")
		h["x-ratelimit-reset-requests"] = []string{"1s"} // as some servers spell it
		_, _ = w.Write(benchAnswerBody)
	}))
	t.Cleanup(up.Close)
	_, gateway, key := loadV1Bench(t, up.Listener.Addr().String())
	r := benchRequest()
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	if gateway.ServeHTTP(w, r); w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	h := w.Header()
	if got := h.Values("X-Request-Id"); len(got) != 1 || got[0] == "req-upstream" {
		t.Errorf("X-Request-Id %q, want the gateway's alone", got)
	}
	if got := h.Values("X-Ratelimit-Limit-Requests"); len(got) != 1 || got[0] == "999999" {
		t.Errorf("X-Ratelimit-Limit-Requests %q, want the gateway's alone", got)
	}
	if got := h.Values("X-Ratelimit-Reset-Requests"); len(got) != 1 || got[0] == "1s" {
		t.Errorf("X-Ratelimit-Reset-Requests %q, want the gateway's alone", got)
	}
	if got := h.Values("X-Ratelimit-Remaining-Tokens"); len(got) != 0 {
		t.Errorf("the upstream's X-Ratelimit-Remaining-Tokens %q reached the client", got)
	}
}

// A /v1 request through Caddyfile.example leaves one request log entry
// with who made it, its charge and how it ended.
func TestV1RequestLogEntry(t *testing.T) {
	discardStderr(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(benchAnswerBody)
	}))
	t.Cleanup(up.Close)
	_, gateway, _ := loadV1Bench(t, up.Listener.Addr().String())
	key, account := fundedAccount(t, "logged")
	r := benchRequest()
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("X-Request-Id", "req-logged-1")
	r.Header.Set("X-User-Id", "end-user-7")
	w := httptest.NewRecorder()
	if gateway.ServeHTTP(w, r); w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	store := openStore(t)
	defer store.Close()
	var got []storage.RequestLogEntry
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = store.RequestLogPage(context.Background(), account, storage.RequestLogQuery{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d request log entries, want 1: %+v", len(got), got)
	}
	e := got[0]
	if e.RequestID != "req-logged-1" || e.ChargeID == "" || e.EndUser != "end-user-7" || e.Route != "v1" ||
		e.Method != "POST" || e.Path != "/v1/chat/completions" || e.ModelAsked != "switchyard-demo" ||
		e.Status != http.StatusOK || e.ErrorCode != "" || e.PromptTokens != 9 || e.CompletionTokens != 12 ||
		e.CostCents <= 0 || e.KeyID == "" || e.At.IsZero() || e.Latency <= 0 {
		t.Errorf("entry %+v", e)
	}
}
