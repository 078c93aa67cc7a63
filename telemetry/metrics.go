// Package telemetry holds Switchyard's Prometheus collectors
// (docs/operations.md lists every series) and what counts a request's
// answer for them. It knows nothing of Caddy: caddymodules registers the
// collectors on each config's registry and feeds them.
package telemetry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are Switchyard's Prometheus collectors (docs/operations.md lists
// every series). A nil *Metrics counts nothing. One set exists per process and is registered on each
// config's registry, as Caddy does with its own admin metrics: a reload
// gets a fresh registry, and registering the same collectors on it keeps
// every count instead of starting them over.
type Metrics struct {
	requests      *prometheus.CounterVec // route, status, code
	admissions    *prometheus.CounterVec // decision
	fallbacks     prometheus.Counter
	tokens        *prometheus.CounterVec // route, kind
	cents         *prometheus.CounterVec // route
	chargeErrors  *prometheus.CounterVec // route
	upstreamFirst prometheus.Histogram
	toolRuns      *prometheus.CounterVec   // tool, outcome
	toolDuration  *prometheus.HistogramVec // tool
	panics        panicCollector
	requestMetrics
	// models are the request histograms' series by the model names the
	// config serves (ForConfig): the model label takes no other value
	// but other and none.
	models *modelTable
	// upstream is the host of the config's one upstream when it has no
	// model pools, for the access log.
	upstream string
	// series are the series of the per-request observations, kept once
	// looked up; shared with the copies ForConfig makes, which keep the
	// vectors.
	series *series
}

// Values of the route label.
const (
	RouteV1      = "v1"
	RouteV3Chat  = "v3_chat"
	RouteV3Files = "v3_files"
	RouteOther   = "other"
)

// Values of the decision label of switchyard_limiter_decisions_total.
const (
	decisionAdmitted      = "admitted"
	decisionRateLimited   = "rate_limited"
	decisionStreamLimited = "stream_limited"
	decisionBalance       = "insufficient_balance"
	decisionUnavailable   = "unavailable"
)

// CodeNone labels responses that carry no envelope of the gateway's own:
// successes, and errors the /v1 upstream answered itself.
const CodeNone = "none"

// Process is the process's one set of collectors.
var Process = New()

// New is a set of collectors, registered nowhere yet.
func New() *Metrics {
	const ns = "switchyard"
	return &Metrics{
		requests: counterVec("requests_total",
			"Requests seen by switchyard_auth, by route, final status and error envelope code.",
			"route", "status", "code"),
		admissions: counterVec("limiter_decisions_total",
			"Decisions of switchyard_limits' admission step.",
			"decision"),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "limiter_redis_fallbacks_total",
			Help: "Admissions decided in process because Redis did not answer (fail_open).",
		}),
		tokens: counterVec("tokens_total",
			"Tokens of recorded usage, by route and kind (prompt, completion).",
			"route", "kind"),
		cents: counterVec("charged_cents_total",
			"Cents charged to accounts, by route.",
			"route"),
		chargeErrors: counterVec("charge_errors_total",
			"Charges the store failed to record, by route.",
			"route"),
		upstreamFirst: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Name: "upstream_first_byte_seconds",
			Help:    "Time from a metered /v1 request to the upstream's successful response headers.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}),
		toolRuns: counterVec("tool_runs_total",
			"Tool calls of /v3 chat completions, by tool and outcome (done, failed, timeout, refused).",
			"tool", "outcome"),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "tool_duration_seconds",
			Help: "Time a tool call took, whatever its outcome, by tool.",
			// Up to the longest tool_timeout one would set: a search is
			// seconds, a rendered document can take minutes.
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"tool"}),
		requestMetrics: newRequestMetrics(),
		models:         newModelTable(nil),
		series:         new(series),
	}
}

// Register registers m on reg. A collector reg already holds is reused
// rather than refused, so provisioning twice on one registry neither
// panics nor splits a series in two.
func (m *Metrics) Register(reg prometheus.Registerer) (*Metrics, error) {
	out := *m
	var errs []error
	Reuse(reg, &out.requests, &errs)
	Reuse(reg, &out.admissions, &errs)
	Reuse(reg, &out.fallbacks, &errs)
	Reuse(reg, &out.tokens, &errs)
	Reuse(reg, &out.cents, &errs)
	Reuse(reg, &out.chargeErrors, &errs)
	Reuse(reg, &out.upstreamFirst, &errs)
	Reuse(reg, &out.toolRuns, &errs)
	Reuse(reg, &out.toolDuration, &errs)
	Reuse(reg, &out.panics, &errs)
	out.requestMetrics.register(reg, &errs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// reg may have given other vectors of the same names.
	out.series, out.models = new(series), out.models.fresh()
	return &out, nil
}

// counterVec is the counter switchyard_<name>, with the given labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "switchyard", Name: name, Help: help}, labels)
}

// Reuse registers *c on reg, or points *c at the collector reg holds
// already under its name; errs gathers any other failure.
func Reuse[C prometheus.Collector](reg prometheus.Registerer, c *C, errs *[]error) {
	err := reg.Register(*c)
	if err == nil {
		return
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			*c = existing
			return
		}
	}
	*errs = append(*errs, err)
}
