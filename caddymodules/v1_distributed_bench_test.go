package caddymodules

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// BenchmarkV1JSONDistributed is BenchmarkV1JSON in the distributed mode:
// Caddyfile.example's switchyard block on a PostgreSQL database of its
// own and the test Redis under a prefix of its own
// (SWITCHYARD_TEST_POSTGRES, SWITCHYARD_TEST_REDIS), beside the same
// plain reverse_proxy site. Each request's admission is a Redis round
// trip and its charge a row the PostgreSQL ledger writer commits.
//
//	go test ./caddymodules -run '^$' -bench V1JSONDistributed -benchmem
func BenchmarkV1JSONDistributed(b *testing.B) {
	discardStderr(b)
	redisURL, prefix := testenv.Redis(b)
	b.Setenv("SWITCHYARD_POSTGRES_URL", testenv.Postgres(b))
	b.Setenv("SWITCHYARD_REDIS_URL", redisURL)
	b.Setenv("SWITCHYARD_REDIS_PREFIX", prefix)
	b.Setenv("SWITCHYARD_REDIS_MODE", "single")
	b.Setenv("SWITCHYARD_KEY_SECRET", strings.Repeat("k", 32))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(benchAnswerBody)))
		_, _ = w.Write(benchAnswerBody)
	}))
	b.Cleanup(up.Close)
	plain, gateway, key := loadV1Bench(b, up.Listener.Addr().String())

	for _, c := range []struct {
		name string
		srv  *caddyhttp.Server
	}{{"plain", plain}, {"switchyard", gateway}} {
		b.Run(c.name, func(b *testing.B) {
			benchServe(b, c.srv, key, 1)
		})
	}
	// 32 clients at once, as the bench's budget line: admissions share
	// the Redis pipelines, charges the ledger writer's batches.
	for _, c := range []struct {
		name string
		srv  *caddyhttp.Server
	}{{"plain-c32", plain}, {"switchyard-c32", gateway}} {
		b.Run(c.name, func(b *testing.B) {
			benchServe(b, c.srv, key, 32)
		})
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
