package passthrough

import (
	"maps"
	"net/http"
	"testing"
)

// sdkRequestHeaders are the headers of a /v1 JSON request as the OpenAI
// SDKs send it, as the proxy gets them.
var sdkRequestHeaders = http.Header{
	"Authorization":               {"Bearer sk-upstream"},
	"Content-Type":                {"application/json"},
	"Content-Length":              {"75"},
	"Accept":                      {"application/json"},
	"Accept-Encoding":             {"gzip, deflate"},
	"User-Agent":                  {"OpenAI/Python 1.99.0"},
	"X-Request-Id":                {"0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10"},
	"X-Stainless-Lang":            {"python"},
	"X-Stainless-Package-Version": {"1.99.0"},
	"X-Stainless-Os":              {"Linux"},
	"X-Stainless-Arch":            {"x64"},
	"X-Stainless-Runtime":         {"CPython"},
	"X-Stainless-Runtime-Version": {"3.12.3"},
	"X-Stainless-Retry-Count":     {"0"},
}

// BenchmarkFilterRequestHeaders is the request headers' filter of every
// /v1 request (the map's refill is part of every iteration).
func BenchmarkFilterRequestHeaders(b *testing.B) {
	h := make(http.Header, len(sdkRequestHeaders))
	b.ReportAllocs()
	for b.Loop() {
		maps.Copy(h, sdkRequestHeaders)
		FilterRequestHeaders(h)
	}
}

// BenchmarkHeaderFilter is the answer's headers' filter of every /v1
// request: the gateway's own headers, then an upstream's answer (the
// map's refill is part of every iteration).
func BenchmarkHeaderFilter(b *testing.B) {
	own := http.Header{
		"X-Request-Id":                   {"0b5c3f4e-8a51-4c1e-9d1e-3f2a7c9b6d10"},
		"X-Ratelimit-Limit-Requests":     {"600"},
		"X-Ratelimit-Remaining-Requests": {"599"},
		"X-Ratelimit-Reset-Requests":     {"100ms"},
	}
	upstream := http.Header{
		"Content-Type":        {"application/json"},
		"Content-Length":      {"312"},
		"Date":                {"Sat, 28 Nov 2026 06:00:00 GMT"},
		"Server":              {"uvicorn"},
		"X-Request-Id":        {"upstream-1"},
		"Openai-Organization": {"operator-org"},
	}
	w := &headerWriter{h: make(http.Header, 16)}
	var f HeaderFilter
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		maps.Copy(w.h, own)
		f.Init(w)
		maps.Copy(w.h, upstream)
		f.WriteHeader(http.StatusOK)
	}
}

// headerWriter is a response writer that keeps its headers alone.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header       { return w.h }
func (*headerWriter) WriteHeader(int)             {}
func (*headerWriter) Write(p []byte) (int, error) { return len(p), nil }
