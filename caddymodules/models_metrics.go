package caddymodules

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/telemetry"
)

// poolCollector reports, when scraped, each upstream's health and
// requests in flight as reverse_proxy sees them: the state /v1 and /v3
// choose by. It is made per config, as it reads that config's pools.
type poolCollector struct{ pools *pools }

var (
	upstreamHealthyDesc = prometheus.NewDesc("switchyard_upstream_healthy",
		"1 when the upstream may be chosen (healthy by active and passive checks), 0 when it is out of its model's pool.",
		[]string{"model", "upstream"}, nil)
	upstreamInFlightDesc = prometheus.NewDesc("switchyard_upstream_requests_in_flight",
		"Requests in flight to the upstream's address, from every pool and route.",
		[]string{"model", "upstream"}, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upstreamHealthyDesc
	ch <- upstreamInFlightDesc
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	// The registry collects on a goroutine of its own.
	defer func() {
		if v := recover(); v != nil {
			guard.Recovered(telemetry.CollectorGoroutine, v)
		}
	}()
	for _, p := range c.pools.table.Pools() {
		for i, u := range p.rp.Upstreams {
			healthy := 0.0
			if u.Healthy() {
				healthy = 1
			}
			name := p.ups[i].Name
			ch <- prometheus.MustNewConstMetric(upstreamHealthyDesc, prometheus.GaugeValue, healthy, p.name, name)
			ch <- prometheus.MustNewConstMetric(upstreamInFlightDesc, prometheus.GaugeValue, float64(u.NumRequests()), p.name, name)
		}
	}
}

// registerPoolCollector registers the health gauges of ps on reg.
func registerPoolCollector(reg prometheus.Registerer, ps *pools) error {
	c := &poolCollector{pools: ps}
	var errs []error
	telemetry.Reuse(reg, &c, &errs)
	return errors.Join(errs...)
}
