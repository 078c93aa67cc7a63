package telemetry

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/switchyardhq/switchyard/storage"
)

// value is what m counts or has observed.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Histogram != nil {
		return float64(out.Histogram.GetSampleCount())
	}
	if out.Gauge != nil {
		return out.Gauge.GetValue()
	}
	return out.Counter.GetValue()
}

// seriesOf is how many series c has.
func seriesOf(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 16)
	c.Collect(ch)
	close(ch)
	return len(ch)
}

// The series kept are the vector's own, each vector's, and stay so when
// looked up from many goroutines at once.
func TestKeptSeriesAreTheVectorsSeries(t *testing.T) {
	m, err := New().Register(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m = m.ForConfig([]string{"svc-3"}, "")
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m.CountCharge(RouteV1, storage.UsageRecord{PromptTokens: 1, CompletionTokens: 2}, 3, nil)
				m.CountRequest(r, NewWriter(httptest.NewRecorder(), r, m), http.StatusOK, CodeNone, "svc-3")
				m.CountRequest(r, NewWriter(httptest.NewRecorder(), r, m), http.StatusTooManyRequests, "rate_limit_exceeded", "gpt-x")
			}
		})
	}
	wg.Wait()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"prompt tokens", value(t, m.tokens.WithLabelValues(RouteV1, "prompt")), 800},
		{"completion tokens", value(t, m.tokens.WithLabelValues(RouteV1, "completion")), 1600},
		{"cents", value(t, m.cents.WithLabelValues(RouteV1)), 2400},
		{"tokens' series", float64(seriesOf(m.tokens)), 2},
		{"200s", value(t, m.requests.WithLabelValues(RouteV1, "200", CodeNone)), 800},
		{"429s", value(t, m.requests.WithLabelValues(RouteV1, "429", "rate_limit_exceeded")), 800},
		{"requests' series", float64(seriesOf(m.requests)), 2},
		{"durations of svc-3", value(t, m.duration.WithLabelValues(RouteV1, "svc-3").(prometheus.Metric)), 800},
		{"durations of other", value(t, m.duration.WithLabelValues(RouteV1, modelOther).(prometheus.Metric)), 800},
		{"durations' series", float64(seriesOf(m.duration)), 2},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if m.series.routes[routeV1].cents.get(nil) != m.cents.WithLabelValues(RouteV1) {
		t.Error("the series kept is not the vector's")
	}

	// A charge of a route that is no value of the label still counts.
	m.CountCharge("v9", storage.UsageRecord{PromptTokens: 5}, 1, nil)
	if got := value(t, m.tokens.WithLabelValues("v9", "prompt")); got != 5 {
		t.Errorf("tokens of route v9: %v, want 5", got)
	}
}

// A registry that holds other vectors of the same names gets its
// observations on those, not on the vectors of the Metrics registered.
func TestRegisteredCopyObservesTheRegistrysVectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := New().Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	other := New()
	other.CountCharge(RouteV1, storage.UsageRecord{}, 1, nil) // its own series kept
	second, err := other.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	second.CountCharge(RouteV1, storage.UsageRecord{}, 2, nil)
	if got := value(t, first.cents.WithLabelValues(RouteV1)); got != 2 {
		t.Errorf("the registry's cents: %v, want 2", got)
	}
	if got := value(t, other.cents.WithLabelValues(RouteV1)); got != 1 {
		t.Errorf("the unregistered cents: %v, want 1", got)
	}
}
