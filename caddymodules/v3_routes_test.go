package caddymodules

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// v3StreamAnswer is a backend's streamed answer of one short sentence
// with its usage, as the /v3 orchestrator asks for every backend call.
const v3StreamAnswer = `data: {"id":"chatcmpl-v3","object":"chat.completion.chunk","created":1764288000,"model":"switchyard-demo","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello there."},"finish_reason":null}]}

data: {"id":"chatcmpl-v3","object":"chat.completion.chunk","created":1764288000,"model":"switchyard-demo","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"id":"chatcmpl-v3","object":"chat.completion.chunk","created":1764288000,"model":"switchyard-demo","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}

data: [DONE]

`

// loadV3Routes loads Caddyfile.example (loadV1Bench) in front of a
// backend that streams v3StreamAnswer to every completion request.
func loadV3Routes(tb testing.TB) (gateway *caddyhttp.Server, key string) {
	tb.Helper()
	discardStderr(tb)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, v3StreamAnswer)
	}))
	tb.Cleanup(up.Close)
	_, gateway, key = loadV1Bench(tb, up.Listener.Addr().String())
	return gateway, key
}

// v3Request is a request to the gateway as the server reads it off the
// wire, with the key when it is not empty.
func v3Request(method, path, key, body string) *http.Request {
	r := httptest.NewRequest(method, "http://127.0.0.1:8080"+path, strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:53124"
	r.RequestURI = path
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	return r
}

const (
	v3ChatBody      = `{"model":"switchyard-demo","messages":[{"role":"user","content":"Hello"}]}`
	v3ResponsesBody = `{"model":"switchyard-demo","input":"Hello"}`
)

// TestExampleRoutes holds what a client sees of Caddyfile.example's
// routes, whatever shape the site's routes take: the /v3 handlers
// behind the key (an unknown /v3 path too), the routes without a key,
// and the catch-all 404, each as a status and the envelope's code.
func TestExampleRoutes(t *testing.T) {
	gateway, key := loadV3Routes(t)
	tests := []struct {
		method, path, body string
		withKey            bool
		status             int
		code               string // the error envelope's; "" for none
	}{
		{"POST", "/v3/chat/completions", v3ChatBody, true, 200, ""},
		{"POST", "/v3/chat/completions", v3ChatBody, false, 401, "invalid_api_key"},
		{"POST", "/v3/responses", v3ResponsesBody, true, 200, ""},
		{"POST", "/v3/responses", v3ResponsesBody, false, 401, "invalid_api_key"},
		{"GET", "/v3/models", "", true, 200, ""},
		{"GET", "/v3/models", "", false, 401, "invalid_api_key"},
		{"GET", "/v3/models/x", "", true, 404, "route_not_found"},
		{"GET", "/v3/models/x", "", false, 401, "invalid_api_key"},
		{"GET", "/v3/files", "", true, 200, ""},
		{"GET", "/v3/files", "", false, 401, "invalid_api_key"},
		{"GET", "/v3/files/x", "", true, 404, "not_found"},
		{"GET", "/v3/files/x", "", false, 401, "invalid_api_key"},
		{"GET", "/v3/nope", "", true, 404, "route_not_found"},
		{"GET", "/v3/nope", "", false, 401, "invalid_api_key"},
		{"GET", "/v3", "", true, 404, "route_not_found"},
		{"GET", "/v3", "", false, 404, "route_not_found"},
		{"GET", "/v1/models", "", false, 401, "invalid_api_key"},
		{"GET", "/healthz", "", false, 200, ""},
		{"GET", "/admin/me", "", false, 401, "invalid_token"},
		{"GET", "/dashboard", "", false, 308, ""},
		{"GET", "/dashboard/", "", false, 200, ""},
		{"GET", "/nope", "", true, 404, "route_not_found"},
		{"GET", "/nope", "", false, 404, "route_not_found"},
	}
	for _, tt := range tests {
		k := ""
		if tt.withKey {
			k = key
		}
		w := httptest.NewRecorder()
		gateway.ServeHTTP(w, v3Request(tt.method, tt.path, k, tt.body))
		var envelope struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &envelope)
		if w.Code != tt.status || envelope.Error.Code != tt.code {
			t.Errorf("%s %s (key %v): %d %q, want %d %q; body %.200s",
				tt.method, tt.path, tt.withKey, w.Code, envelope.Error.Code, tt.status, tt.code, w.Body)
		}
	}
}

// BenchmarkV3Request serves /v3 requests through Caddyfile.example in
// this process, as BenchmarkV1JSON serves /v1's: a chat completion
// answered as JSON from a streamed backend call, the model list, and an
// unknown path with a good key. The routes' own cost is what the model
// list, which needs no backend, shows best.
//
//	go test ./caddymodules -run '^$' -bench V3Request -benchmem
func BenchmarkV3Request(b *testing.B) {
	gateway, key := loadV3Routes(b)
	for _, c := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"chat", "POST", "/v3/chat/completions", v3ChatBody, 200},
		{"models", "GET", "/v3/models", "", 200},
		{"unknown", "GET", "/v3/nope", "", 404},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range 100 { // the key cached, the connections open
				w := httptest.NewRecorder()
				if gateway.ServeHTTP(w, v3Request(c.method, c.path, key, c.body)); w.Code != c.status {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
			wrong := 0
			b.ReportAllocs()
			b.ResetTimer()
			before := processCPU(b)
			for b.Loop() {
				w := &benchWriter{header: make(http.Header)}
				if gateway.ServeHTTP(w, v3Request(c.method, c.path, key, c.body)); w.status != c.status {
					wrong++
				}
			}
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
			if wrong > 0 {
				b.Fatalf("%d of %d requests were not answered %d", wrong, b.N, c.status)
			}
		})
	}
}

// BenchmarkIdleStreamMemoryExample is BenchmarkIdleStreamMemory on
// Caddyfile.example's own routes, where that one serves route blocks
// like them: what the shape of the shipped routes keeps of each open
// stream.
//
//	go test ./caddymodules -run '^$' -bench IdleStreamMemoryExample -benchtime 1x
func BenchmarkIdleStreamMemoryExample(b *testing.B) {
	if testenv.RaceEnabled {
		b.Skip("memory under the race detector is the detector's")
	}
	discardStderr(b)
	up := startSilentBackend(b)
	plain, gateway, key := loadV1Bench(b, strings.TrimPrefix(strings.TrimSuffix(up.url, "/v1"), "http://"))
	g := &idleGateway{plain: "http://" + plain.Listen[0], gateway: "http://" + gateway.Listen[0], key: key}
	var sums idleFigures
	for range b.N {
		sums.add(g.measure(b, up, 200, g.kinds()))
	}
	sums.report(b, b.N)
}
