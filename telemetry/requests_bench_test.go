package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// BenchmarkV1RequestCounts is what a charged /v1 JSON request costs the
// collectors: its admission, its charge, its timing and its count. The
// response writer underneath does nothing, so that what is measured is
// the collectors' own.
func BenchmarkV1RequestCounts(b *testing.B) {
	m, err := New().Register(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	m = m.ForConfig([]string{"svc-3"}, "127.0.0.1:8000")
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	rec := storage.UsageRecord{PromptTokens: 12, CompletionTokens: 30, Finished: time.Now()}
	var w Writer
	under := discardWriter{header: http.Header{"Content-Type": {"application/json"}}}
	body := []byte(`{"ok":true}`)
	b.ReportAllocs()
	for b.Loop() {
		w.Init(under, r, m)
		m.CountAdmission(limits.Admission{}, nil)
		m.ObserveFirstByte(w.start)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		m.CountCharge(RouteV1, rec, 3, nil)
		m.CountRequest(r, &w, http.StatusOK, CodeNone, "svc-3")
	}
}

// discardWriter is a response writer that keeps nothing.
type discardWriter struct{ header http.Header }

func (w discardWriter) Header() http.Header       { return w.header }
func (discardWriter) WriteHeader(int)             {}
func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
