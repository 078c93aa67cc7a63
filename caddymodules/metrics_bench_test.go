package caddymodules

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// BenchmarkCaddyMetricsOnV1 is BenchmarkV1JSON with Caddy's own HTTP
// server metrics (the global `metrics` option) on, as Caddyfile.example
// ships, and off: what they cost a /v1 request, on the gateway and on a
// plain reverse_proxy site beside it. Switchyard's own metrics are on in
// both.
//
//	go test ./caddymodules -run '^$' -bench CaddyMetricsOnV1 -benchmem
func BenchmarkCaddyMetricsOnV1(b *testing.B) {
	discardStderr(b)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(benchAnswerBody)))
		_, _ = w.Write(benchAnswerBody)
	}))
	b.Cleanup(up.Close)
	example, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		b.Fatal(err)
	}
	plainPort := setV1BenchEnv(b, up.Listener.Addr().String())
	key := ""
	for _, metrics := range []string{"on", "off"} {
		cfg := string(example)
		if metrics == "off" {
			cfg = withoutCaddyMetrics(b, cfg)
		}
		plain, gateway := loadV1BenchConfig(b, cfg, benchLimits, up.Listener.Addr().String(), plainPort)
		if key == "" {
			key = fundedKey(b, "bench")
		}
		for _, c := range []struct {
			name string
			srv  *caddyhttp.Server
		}{{"plain", plain}, {"switchyard", gateway}} {
			b.Run(c.name+"/caddy-metrics="+metrics, func(b *testing.B) { serveV1Bench(b, c.srv, key) })
		}
	}
}

// withoutCaddyMetrics is the Caddyfile cfg without its global `metrics`
// option.
func withoutCaddyMetrics(b *testing.B, cfg string) string {
	b.Helper()
	out := strings.Replace(cfg, "\n\tmetrics\n", "\n", 1)
	if out == cfg {
		b.Fatal("Caddyfile.example has no global metrics option to take out")
	}
	return out
}

// setV1BenchEnv sets the gateway's settings as loadV1Bench does, in front
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

// serveV1Bench serves the bench's /v1 JSON request with key through srv
// b.N times, as BenchmarkV1JSON does, reporting the process's CPU per
// request.
func serveV1Bench(b *testing.B, srv *caddyhttp.Server, key string) {
	req := func() *http.Request {
		r := benchRequest()
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		return r
	}
	for range 200 { // the key cached, the connections open
		w := httptest.NewRecorder()
		if srv.ServeHTTP(w, req()); w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	refused := 0
	b.ReportAllocs()
	b.ResetTimer()
	before := processCPU(b)
	for b.Loop() {
		w := &benchWriter{header: make(http.Header)}
		if srv.ServeHTTP(w, req()); w.status != http.StatusOK {
			refused++
		}
	}
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
	if refused > 0 {
		b.Fatalf("%d of %d requests were not answered 200", refused, b.N)
	}
}
