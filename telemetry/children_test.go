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

// The series kept per label set are the ones the registry exports: each
// request counts in its own series, whether its labels were seen before
// or not, and a reload (a second Register on a new registry) keeps
// counting in the same series.
func TestKeptSeriesAreTheExportedOnes(t *testing.T) {
	process := New()
	for _, reload := range []int{1, 2} {
		reg := prometheus.NewRegistry()
		m, err := process.Register(reg)
		if err != nil {
			t.Fatal(err)
		}
		m = m.ForConfig([]string{"svc-3"}, "")
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		rec := storage.UsageRecord{PromptTokens: 5, CompletionTokens: 7, Finished: time.Now()}
		for _, status := range []int{200, 200, 429} {
			w := NewWriter(httptest.NewRecorder(), r, m)
			m.CountAdmission(limits.Admission{}, nil)
			m.CountCharge(RouteV1, rec, 2, nil)
			m.CountRequest(r, w, status, CodeNone, "svc-3")
		}
		m.CountRequest(r, NewWriter(httptest.NewRecorder(), r, m), 200, CodeNone, "unnamed")

		counter := func(name string, labels map[string]string) float64 {
			t.Helper()
			f := gathered(t, reg, name)
			if f == nil {
				t.Fatalf("reload %d: %s not exported", reload, name)
			}
			s := labelled(f, labels)
			if s == nil {
				t.Fatalf("reload %d: %s%v not exported", reload, name, labels)
			}
			if s.GetCounter() != nil {
				return s.GetCounter().GetValue()
			}
			return float64(s.GetHistogram().GetSampleCount())
		}
		n := float64(reload)
		checks := []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"switchyard_requests_total", map[string]string{"route": "v1", "status": "200", "code": "none"}, 3 * n},
			{"switchyard_requests_total", map[string]string{"route": "v1", "status": "429", "code": "none"}, n},
			{"switchyard_request_duration_seconds", map[string]string{"route": "v1", "model": "svc-3"}, 3 * n},
			{"switchyard_request_duration_seconds", map[string]string{"route": "v1", "model": "other"}, n},
			{"switchyard_limiter_decisions_total", map[string]string{"decision": "admitted"}, 3 * n},
			{"switchyard_tokens_total", map[string]string{"route": "v1", "kind": "prompt"}, 15 * n},
			{"switchyard_tokens_total", map[string]string{"route": "v1", "kind": "completion"}, 21 * n},
			{"switchyard_charged_cents_total", map[string]string{"route": "v1"}, 6 * n},
		}
		for _, c := range checks {
			if got := counter(c.name, c.labels); got != c.want {
				t.Errorf("reload %d: %s%v = %v, want %v", reload, c.name, c.labels, got, c.want)
			}
		}
	}
}
