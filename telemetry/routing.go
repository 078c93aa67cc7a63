package telemetry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Routes count the routing of models to their pools
// (docs/routing.md). A nil *Routes counts nothing. Like metrics,
// one set exists per process and is registered on each config's
// registry, so that a reload keeps the counts.
type Routes struct {
	selections *prometheus.CounterVec // model, upstream
	retries    *prometheus.CounterVec // model
	fallbacks  *prometheus.CounterVec // from, to
}

// ProcessRoutes is the process's one set of routing collectors.
var ProcessRoutes = &Routes{
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

// Register registers m on reg, reusing collectors reg already holds.
func (m *Routes) Register(reg prometheus.Registerer) (*Routes, error) {
	out := *m
	var errs []error
	Reuse(reg, &out.selections, &errs)
	Reuse(reg, &out.retries, &errs)
	Reuse(reg, &out.fallbacks, &errs)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &out, nil
}

// CountSelection counts a request sent to upstream of model's pool.
func (m *Routes) CountSelection(model, upstream string) {
	if m != nil {
		m.selections.WithLabelValues(model, upstream).Inc()
	}
}

// CountRetry counts a request model's pool sent on to another upstream.
func (m *Routes) CountRetry(model string) {
	if m != nil {
		m.retries.WithLabelValues(model).Inc()
	}
}

// CountFallback counts a request moved on from model from to its
// fallback to.
func (m *Routes) CountFallback(from, to string) {
	if m != nil {
		m.fallbacks.WithLabelValues(from, to).Inc()
	}
}
