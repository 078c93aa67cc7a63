package telemetry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// UpstreamState is what a scrape reports of one upstream of a model's
// pool.
type UpstreamState struct {
	Model, Upstream string
	// Healthy: the upstream may be chosen (healthy by active and passive
	// checks), not out of its model's pool.
	Healthy bool
	// InFlight counts requests in flight to the upstream's address, from
	// every pool and route.
	InFlight int
}

// upstreamCollector reports, when scraped, each upstream's health and
// requests in flight as the pools see them: the state /v1 and /v3
// choose by. It is made per config, as it reads that config's pools.
type upstreamCollector struct {
	walk func(yield func(UpstreamState))
}

var (
	upstreamHealthyDesc = prometheus.NewDesc("switchyard_upstream_healthy",
		"1 when the upstream may be chosen (healthy by active and passive checks), 0 when it is out of its model's pool.",
		[]string{"model", "upstream"}, nil)
	upstreamInFlightDesc = prometheus.NewDesc("switchyard_upstream_requests_in_flight",
		"Requests in flight to the upstream's address, from every pool and route.",
		[]string{"model", "upstream"}, nil)
)

func (c *upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upstreamHealthyDesc
	ch <- upstreamInFlightDesc
}

func (c *upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	// The registry collects on a goroutine of its own.
	defer func() {
		if v := recover(); v != nil {
			guard.Recovered(CollectorGoroutine, v)
		}
	}()
	c.walk(func(u UpstreamState) {
		healthy := 0.0
		if u.Healthy {
			healthy = 1
		}
		ch <- prometheus.MustNewConstMetric(upstreamHealthyDesc, prometheus.GaugeValue, healthy, u.Model, u.Upstream)
		ch <- prometheus.MustNewConstMetric(upstreamInFlightDesc, prometheus.GaugeValue, float64(u.InFlight), u.Model, u.Upstream)
	})
}

// RegisterUpstreamCollector registers on reg the health gauges of the
// upstreams walk yields at each scrape.
func RegisterUpstreamCollector(reg prometheus.Registerer, walk func(yield func(UpstreamState))) error {
	c := &upstreamCollector{walk: walk}
	var errs []error
	Reuse(reg, &c, &errs)
	return errors.Join(errs...)
}
