package caddymodules

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/caddymodules/accesslog"
	"github.com/switchyardhq/switchyard/internal/linebuffer"
	"github.com/switchyardhq/switchyard/storage"
)

// The access log and Caddy's HTTP metrics are measured through Caddy
// itself: a server loaded from a Caddyfile with Caddyfile.example's own
// `log` block and `metrics` option, serving one /v1 JSON request and
// answer shaped as the gateway's (its headers, its log fields), called
// through the server's ServeHTTP. What a configuration adds over the
// bare server is its cost per request.

func init() {
	caddy.RegisterModule(benchAnswer{})
	httpcaddyfile.RegisterHandlerDirective("switchyard_bench_answer", func(httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		return benchAnswer{}, nil
	})
}

// benchAnswer answers as switchyard_auth, switchyard_limits and
// switchyard_meter leave a charged /v1 JSON request: the fields they add
// to the access log line and the headers of the answer.
type benchAnswer struct{}

func (benchAnswer) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.switchyard_bench_answer", New: func() caddy.Module { return new(benchAnswer) }}
}

var benchAnswerBody = []byte(`{"id":"chatcmpl-7f3a","object":"chat.completion","created":1764288000,"model":"switchyard-demo",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"You said: Hello. That is all the demo backend does."},` +
	`"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`)

func (benchAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	line := lineFor(r.Context())
	line.Request("0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10", "019ac8f2-5e1b-7c3d-8e4f-a1b2c3d4e5f6")
	line.Caller("acct_3kq8Zp1", "key_3kq8Zp1xW")
	line.Outcome("switchyard-demo", "none", "")
	line.Charged(storage.UsageRecord{Model: "switchyard-demo", PromptTokens: 9, CompletionTokens: 12, Upstream: "127.0.0.1:8000"}, 1)
	h := w.Header()
	h.Set("X-Request-Id", "0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10")
	h.Set("X-Ratelimit-Limit-Requests", "600")
	h.Set("X-Ratelimit-Remaining-Requests", "599")
	h.Set("X-Ratelimit-Reset-Requests", "100ms")
	h.Set("Content-Type", "application/json")
	h.Set("Date", "Fri, 28 Nov 2026 00:00:00 GMT")
	h.Set("Server", "Caddy")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(benchAnswerBody)
	return err
}

// regexpAccessLog is Caddyfile.example's `log` block as it was before the
// switchyard_trim filter: the same fields cut with Caddy's regexp filters.
const regexpAccessLog = `	log {
		output stderr
		format filter {
			wrap json
			request>headers delete
			request>uri multi_regexp {
				regexp [?].* ""
				regexp ^(.{256}).+$ "$1…"
			}
			request>host regexp ^(.{256}).+$ "$1…"
		}
	}
`

// exampleBlock is the block of Caddyfile.example that starts with the
// line "\t<name> {" (one tab: a site's directive), through its closing
// brace.
func exampleBlock(tb testing.TB, name string) string {
	tb.Helper()
	raw, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		tb.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n\t"+name+" {\n")
	if !ok {
		tb.Fatalf("Caddyfile.example has no %s block", name)
	}
	body, _, ok := strings.Cut(rest, "\n\t}\n")
	if !ok {
		tb.Fatalf("Caddyfile.example's %s block does not end", name)
	}
	return "\t" + name + " {\n" + body + "\n\t}\n"
}

// exampleHasMetrics reports whether Caddyfile.example's global options
// turn Caddy's HTTP metrics on, as the benchmark then does.
func exampleHasMetrics(tb testing.TB) bool {
	raw, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Contains(string(raw), "\n\tmetrics\n")
}

// loadBenchServer loads a server on a free local port with the given
// global options and site directives, answering /v1/* with benchAnswer,
// and returns it; the test's cleanup unloads it.
func loadBenchServer(tb testing.TB, global, site string) *caddyhttp.Server {
	tb.Helper()
	cfg := "{\n\tadmin off\n\tpersist_config off\n" + global + "}\nhttp://127.0.0.1:0 {\n" + site +
		"\troute /v1/* {\n\t\tswitchyard_bench_answer\n\t}\n}\n"
	adapter := caddyconfig.GetAdapter("caddyfile")
	js, warn, err := adapter.Adapt([]byte(cfg), nil)
	if err != nil {
		tb.Fatalf("%v\n%s", err, cfg)
	}
	for _, w := range warn {
		tb.Log(w.Message)
	}
	if err := caddy.Load(js, true); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = caddy.Stop() })
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		tb.Fatal(err)
	}
	for _, srv := range app.(*caddyhttp.App).Servers {
		return srv
	}
	tb.Fatal("no server")
	return nil
}

// benchRequest is a /v1 JSON request as the OpenAI SDKs send it.
func benchRequest() *http.Request {
	body := `{"model":"switchyard-demo","messages":[{"role":"user","content":"Hello"}]}`
	r := httptest.NewRequest("POST", "http://127.0.0.1:8080/v1/chat/completions", strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:53124"
	r.RequestURI = "/v1/chat/completions" // as the server reads it off the request line
	h := r.Header
	h.Set("Authorization", "Bearer sk-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL")
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "OpenAI/Python 1.99.0")
	h.Set("X-Stainless-Lang", "python")
	h.Set("X-Stainless-Package-Version", "1.99.0")
	h.Set("X-Stainless-Os", "Linux")
	h.Set("X-Stainless-Arch", "x64")
	h.Set("X-Stainless-Runtime", "CPython")
	h.Set("X-Stainless-Runtime-Version", "3.12.3")
	h.Set("X-Stainless-Retry-Count", "0")
	h.Set("Accept-Encoding", "gzip, deflate")
	return r
}

// discardStderr points os.Stderr, where Caddy's stderr writer writes,
// at a pipe that a goroutine drains, as a service manager or a container
// runtime reads a gateway's stderr: each write is a write(2) to a pipe.
func discardStderr(tb testing.TB) {
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	go func() { io.Copy(io.Discard, r); r.Close() }()
	saved := os.Stderr
	os.Stderr = w
	tb.Cleanup(func() { os.Stderr = saved; w.Close() })
}

// BenchmarkAccessLog serves one /v1 JSON request through a Caddy server
// without access log and metrics (none), with the access log as
// Caddyfile.example had it with regexp filters (regexp), with
// switchyard_trim in their place (trim), as Caddyfile.example has it now
// but written to stderr line by line (example-unbuffered) and as it is
// (example), with Caddy's metrics alone (metrics), and with both as
// Caddyfile.example configures them (example+metrics). The difference
// to none is what each costs.
func BenchmarkAccessLog(b *testing.B) {
	metrics := ""
	if exampleHasMetrics(b) {
		metrics = "\tmetrics\n"
	}
	example := exampleBlock(b, "log")
	unbuffered := example
	if i, j := strings.Index(example, "\t\toutput "), strings.Index(example, "\t\tformat "); i > 0 && j > i {
		unbuffered = example[:i] + "\t\toutput stderr\n" + example[j:]
	}
	trimmed := strings.Replace(strings.Replace(regexpAccessLog,
		"request>uri multi_regexp {\n\t\t\t\tregexp [?].* \"\"\n\t\t\t\tregexp ^(.{256}).+$ \"$1…\"\n\t\t\t}",
		"request>uri switchyard_trim {\n\t\t\t\tdrop_query\n\t\t\t\tmax_chars 256\n\t\t\t}", 1),
		`request>host regexp ^(.{256}).+$ "$1…"`, "request>host switchyard_trim {\n\t\t\t\tmax_chars 256\n\t\t\t}", 1)
	// Caddy's first load in a process starts background work (the TLS
	// storage's cleaning, certificate maintenance) that would be counted
	// against the first case: do it, and serve a while, before measuring.
	func() {
		discardStderr(b)
		srv := loadBenchServer(b, "", "")
		for range 2000 {
			srv.ServeHTTP(httptest.NewRecorder(), benchRequest())
		}
		if err := caddy.Stop(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}()
	for _, c := range []struct{ name, global, site string }{
		{"none", "", ""},
		{"regexp", "", regexpAccessLog},
		{"trim", "", trimmed},
		{"example-unbuffered", "", unbuffered},
		{"example", "", example},
		{"metrics", "\tmetrics\n", ""},
		{"example+metrics", metrics, example},
	} {
		b.Run(c.name, func(b *testing.B) {
			discardStderr(b)
			srv := loadBenchServer(b, c.global, c.site)
			w := httptest.NewRecorder()
			if srv.ServeHTTP(w, benchRequest()); w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			before := processCPU(b)
			for b.Loop() {
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, benchRequest())
			}
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time the process has used, user and system, in
// nanoseconds. On a shared machine a benchmark's wall time per op grows
// with the other work's; its CPU time per op much less so. It counts
// the garbage collector's work and the goroutine draining the pipe too.
func processCPU(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// The fields of Caddyfile.example's access log filter, before and after
// switchyard_trim and switchyard_headers, as Caddy's adapter writes them.
const (
	regexpLogFields = `{"request>headers":{"filter":"delete"},` +
		`"request>host":{"filter":"regexp","regexp":"^(.{256}).+$","value":"$1…"},` +
		`"request>uri":{"filter":"multi_regexp","operations":[{"regexp":"[?].*"},{"regexp":"^(.{256}).+$","value":"$1…"}]}}`
	exampleLogFields = `{"request>headers":{"filter":"delete"},` +
		`"request>host":{"filter":"switchyard_trim","max_chars":256},` +
		`"request>uri":{"filter":"switchyard_trim","drop_query":true,"max_chars":256},` +
		`"resp_headers":{"filter":"switchyard_headers"}}`
)

// benchFilterEncoder is Caddy's filter encoder, wrapping json, with the
// given fields' filters (JSON of caddy.logging.encoders.filter.*).
func benchFilterEncoder(tb testing.TB, fields string) zapcore.Encoder {
	tb.Helper()
	var fe logging.FilterEncoder
	if err := json.Unmarshal([]byte(`{"wrap":{"format":"json"},"fields":`+fields+`}`), &fe); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	if err := fe.Provision(ctx); err != nil {
		tb.Fatal(err)
	}
	return &fe
}

// BenchmarkAccessLogLine encodes one access log line as Server.logRequest
// has its logger do: the request added to a clone of the core (WithLazy),
// then the entry with the response's fields and Switchyard's, through
// the filter encoder with the fields' filters before (regexp) and after
// (example). The writer is left out: BenchmarkAccessLogWrite has it.
func BenchmarkAccessLogLine(b *testing.B) {
	answer := httptest.NewRecorder()
	srvReq := benchRequest()
	benchAnswer{}.ServeHTTP(answer, srvReq.WithContext(context.WithValue(srvReq.Context(),
		caddyhttp.ExtraLogFieldsCtxKey, new(caddyhttp.ExtraLogFields))), nil)
	for _, c := range []struct{ name, fields string }{{"regexp", regexpLogFields}, {"example", exampleLogFields}} {
		b.Run(c.name, func(b *testing.B) {
			core := zapcore.NewCore(benchFilterEncoder(b, c.fields), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
			logger := zap.New(core).Named("http.log.access")
			req := benchRequest()
			extra := []zapcore.Field{
				zap.String("request_id", "0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10"), zap.String("charge_id", "019ac8f2-5e1b-7c3d-8e4f-a1b2c3d4e5f6"),
				zap.String("account_id", "acct_3kq8Zp1"), zap.String("key_id", "key_3kq8Zp1xW"), zap.String("model", "switchyard-demo"),
				zap.String("model_served", "switchyard-demo"), zap.Int64("prompt_tokens", 9), zap.Int64("completion_tokens", 12),
				zap.Int64("cost_cents", 1), zap.Bool("usage_estimated", false), zap.String("upstream", "127.0.0.1:8000"),
			}
			b.ReportAllocs()
			before := processCPU(b)
			for b.Loop() {
				l := logger.WithLazy(zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req})).Named("log0")
				if ce := l.Check(zapcore.InfoLevel, "handled request"); ce != nil {
					fields := make([]zapcore.Field, 0, 6+len(extra))
					fields = append(fields, zap.Int("bytes_read", 74), zap.String("user_id", ""),
						zap.Duration("duration", 41*time.Microsecond), zap.Int("size", len(benchAnswerBody)), zap.Int("status", 200),
						zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: answer.Header()}))
					ce.Write(append(fields, extra...)...)
				}
			}
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkAccessLogWrite writes access log lines of 1.3 KB to a pipe
// that a goroutine drains: each on its own (stderr) and through
// switchyard_buffered's buffer (buffered), counting the write(2) calls.
func BenchmarkAccessLogWrite(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 1300), '\n')
	for _, buffered := range []bool{false, true} {
		name := map[bool]string{false: "stderr", true: "buffered"}[buffered]
		b.Run(name, func(b *testing.B) {
			r, w, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			go func() { io.Copy(io.Discard, r); r.Close() }()
			counted := &countingWriter{out: w}
			var out io.Writer = counted
			var lb *linebuffer.Buffer
			if buffered {
				lb = linebuffer.New(counted, accesslog.DefaultFlushSize, accesslog.DefaultFlushInterval)
				out = lb
			}
			b.ReportAllocs()
			before := processCPU(b)
			for b.Loop() {
				out.Write(line)
			}
			if lb != nil {
				lb.Close()
			} else {
				w.Close()
			}
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(counted.writes)/float64(b.N), "writes/op")
		})
	}
}

type countingWriter struct {
	out    io.WriteCloser
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return c.out.Write(p) }
func (c *countingWriter) Close() error                { return c.out.Close() }

func TestBufferedAccessLogLosesNoLineOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	site := "\tlog {\n\t\toutput switchyard_buffered {\n\t\t\tto file " + path +
		"\n\t\t\tflush_size 1MiB\n\t\t\tflush_interval 1h\n\t\t}\n\t\tformat json\n\t}\n"
	srv := loadBenchServer(t, "", site)
	const n = 50
	for range n {
		w := httptest.NewRecorder()
		if srv.ServeHTTP(w, benchRequest()); w.Code != 200 {
			t.Fatal(w.Code)
		}
	}
	if raw, _ := os.ReadFile(path); len(raw) > 0 {
		t.Fatalf("lines written before the buffer filled or the interval passed: the test would check nothing\n%s", raw)
	}
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(raw), `"msg":"handled request"`); lines != n {
		t.Fatalf("%d access log lines after a clean stop, want %d; the file has %d bytes", lines, n, len(raw))
	}
}
