package caddymodules

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// routeMetrics count the routing of models to their pools
// (docs/routing.md). A nil *routeMetrics counts nothing. Like metrics,
// one set exists per process and is registered on each config's
// registry, so that a reload keeps the counts.
type routeMetrics struct {
	selections *prometheus.CounterVec // model, upstream
	retries    *prometheus.CounterVec // model
	fallbacks  *prometheus.CounterVec // from, to
}

var processRouteMetrics = &routeMetrics{
	selections: counterVec("upstream_selections_total",
		"Requests sent to an upstream of a model's pool, retries included, by model and upstream.",
		"model", "upstream"),
	retries: counterVec("upstream_retries_total",
		"Requests sent on to another upstream after one failed before its answer started, by model whose pool retried.",
		"model"),
	fallbacks: counterVec("model_fallbacks_total",
		"Requests a model's pool could not start an answer for, moved on to the fallback model, by both models.",
		"from", "to"),
}

// register registers m on reg, reusing collectors reg already holds.
func (m *routeMetrics) register(reg prometheus.Registerer) (*routeMetrics, error) {
	out := *m
	var errs []error
	reuse(reg, &out.selections, &errs)
	reuse(reg, &out.retries, &errs)
	reuse(reg, &out.fallbacks, &errs)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &out, nil
}

func (m *routeMetrics) countSelection(model, upstream string) {
	if m != nil {
		m.selections.WithLabelValues(model, upstream).Inc()
	}
}

func (m *routeMetrics) countRetry(model string) {
	if m != nil {
		m.retries.WithLabelValues(model).Inc()
	}
}

func (m *routeMetrics) countFallback(from, to string) {
	if m != nil {
		m.fallbacks.WithLabelValues(from, to).Inc()
	}
}

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
			guard.Recovered(collectorGoroutine, v)
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
	reuse(reg, &c, &errs)
	return errors.Join(errs...)
}
