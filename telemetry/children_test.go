package telemetry

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
	return out.Counter.GetValue()
}

// series is how many series c has.
func series(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 16)
	c.Collect(ch)
	close(ch)
	return len(ch)
}

// The series kept are the vector's own, each vector's, and stay so when
// looked up from many goroutines at once.
func TestSeriesCacheKeepsTheVectorsSeries(t *testing.T) {
	var s seriesCache
	v1, v2 := counterVec("a_total", "a", "route", "kind"), counterVec("b_total", "b", "route", "kind")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				s.counter2(v1, RouteV1, "prompt").Inc()
				s.counter2(v2, RouteV1, "prompt").Add(2)
				s.counter2(v1, RouteV1, "completion").Inc()
			}
		})
	}
	wg.Wait()
	for _, c := range []struct {
		got  float64
		want float64
	}{
		{value(t, v1.WithLabelValues(RouteV1, "prompt")), 800},
		{value(t, v1.WithLabelValues(RouteV1, "completion")), 800},
		{value(t, v2.WithLabelValues(RouteV1, "prompt")), 1600},
		{float64(series(v2)), 1},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	if s.counter2(v1, RouteV1, "prompt") != v1.WithLabelValues(RouteV1, "prompt") {
		t.Error("the series kept is not the vector's")
	}

	// Without a cache, the vector is asked each time.
	var none *seriesCache
	none.counter1(counterVec("c_total", "c", "route"), RouteV1).Inc()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "d"}, []string{"route", "model"})
	none.observer2(h, RouteV1, "m").Observe(1)
	s.observer2(h, RouteV1, "m").Observe(1)
	if n, got := series(h), value(t, h.WithLabelValues(RouteV1, "m").(prometheus.Metric)); n != 1 || got != 2 {
		t.Errorf("%d series with %v observations, want 1 with 2", n, got)
	}
}
