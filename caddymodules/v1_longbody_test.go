package caddymodules

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// longBodySizes are the /v1 bodies the long-body benchmark sends: one
// that reverse_proxy holds in its request buffer and sends with the
// headers, a long prompt as real clients send, and one past the 32 KiB
// of a copy buffer.
var longBodySizes = []struct {
	name string
	size int
}{{"1KB", 1_000}, {"20KB", 20_000}, {"100KB", 100_000}}

// BenchmarkV1LongBody serves /v1 JSON requests whose bodies are of
// longBodySizes through Caddyfile.example and a plain reverse_proxy, as
// BenchmarkV1JSON does: what a body past reverse_proxy's request buffer
// costs on its way to the upstream.
//
//	go test ./caddymodules -run '^$' -bench V1LongBody -benchmem
func BenchmarkV1LongBody(b *testing.B) {
	discardStderr(b)
	plain, gateway, key := loadV1Bench(b, drainingUpstream(b))
	for _, size := range longBodySizes {
		for _, c := range []struct {
			name string
			srv  *caddyhttp.Server
		}{{"plain", plain}, {"switchyard", gateway}} {
			b.Run(size.name+"/"+c.name, func(b *testing.B) {
				body := longChatBody(size.size)
				req := func() *http.Request { return longBodyRequest(key, body) }
				for range 50 { // the key cached, the connections open
					serveOK(b, c.srv, req())
				}
				b.ReportAllocs()
				b.ResetTimer()
				before := processCPU(b)
				for b.Loop() {
					serveOK(b, c.srv, req())
				}
				b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// A /v1 request whose body is past reverse_proxy's request buffer
// reaches the upstream whole through Caddyfile.example's handlers, whose
// proxy writes it through the gateway's transport (transport.go); what
// that saves is BenchmarkV1LongBody's to show.
func TestV1LongBodyArrivesWhole(t *testing.T) {
	discardStderr(t)
	up, got := recordingUpstream(t, httptest.NewServer)
	_, gateway, key := loadV1Bench(t, up.Listener.Addr().String())
	for _, size := range longBodySizes {
		body := longChatBody(size.size)
		serveOK(t, gateway, longBodyRequest(key, body))
		if b, _ := got.Load().([]byte); string(b) != body {
			t.Errorf("a body of %d: the upstream read %d bytes", len(body), len(b))
		}
	}
}

// longChatBody is a chat completion request of about size bytes, its
// length in one user message.
func longChatBody(size int) string {
	const head, tail = `{"model":"switchyard-demo","messages":[{"role":"user","content":"`, `"}]}`
	return head + strings.Repeat("a long prompt ", (size-len(head)-len(tail))/14) + tail
}

// longBodyRequest is the bench's /v1 request with body, as the server
// reads it off the wire.
func longBodyRequest(key, body string) *http.Request {
	r := benchRequest()
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	r.Header.Set("Authorization", "Bearer "+key)
	return r
}

// serveOK serves r and fails unless it was answered 200. r's context ends
// when it was served, as the server ends a request's: what the handlers
// hold until then (the bytes a long body took of the account's share of
// body memory) is given back.
func serveOK(tb testing.TB, srv *caddyhttp.Server, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	w := &benchWriter{header: make(http.Header)}
	if srv.ServeHTTP(w, r); w.status != http.StatusOK {
		tb.Fatalf("answered %d", w.status)
	}
}
