package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/internal/guard"
)

func TestUpstreamCollector(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	states := []UpstreamState{{Model: "alpha", Upstream: "a", Healthy: true, InFlight: 3}, {Model: "alpha", Upstream: "b"}}
	err := RegisterUpstreamCollector(reg, func(yield func(UpstreamState)) {
		for _, s := range states {
			yield(s)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	healthy := map[string]float64{}
	for _, m := range gathered(t, reg, "switchyard_upstream_healthy").GetMetric() {
		healthy[m.GetLabel()[1].GetValue()] = m.GetGauge().GetValue()
	}
	if healthy["a"] != 1 || healthy["b"] != 0 || len(healthy) != 2 {
		t.Errorf("healthy: %v", healthy)
	}
	if v := gathered(t, reg, "switchyard_upstream_requests_in_flight").GetMetric()[0].GetGauge().GetValue(); v != 3 {
		t.Errorf("in flight of a: %v", v)
	}
}

// A walk that panics ends the scrape of these gauges, not the process.
func TestUpstreamCollectorPanic(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	before := guard.Count(CollectorGoroutine)
	if err := RegisterUpstreamCollector(reg, func(func(UpstreamState)) { panic("pool bug") }); err != nil {
		t.Fatal(err)
	}
	_, _ = reg.Gather()
	if n := guard.Count(CollectorGoroutine) - before; n != 1 {
		t.Errorf("%d panics counted, want 1", n)
	}
}
