package telemetry

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// CountAdmission counts the outcome of one limits.Admit.
func (m *Metrics) CountAdmission(adm limits.Admission, err error) {
	if m == nil {
		return
	}
	if adm.Fallback {
		m.fallbacks.Inc()
	}
	d := decisionOf(err)
	m.series.admissions[d].get(func() prometheus.Counter {
		return m.admissions.WithLabelValues(decisionLabels[d])
	}).Inc()
}

func decisionOf(err error) decision {
	if err == nil {
		return admitted
	}
	if _, ok := errors.AsType[*limits.BalanceError](err); ok {
		return balanceShort
	}
	if le, ok := errors.AsType[*limits.LimitError](err); ok {
		if le.Limit == limits.LimitStreams {
			return streamLimited
		}
		return rateLimited
	}
	// Redis down under fail_closed, or anything else that kept the limits
	// from deciding.
	return unavailable
}

// CountCharge counts one usage record and what it charged; a charge the
// store failed to record counts its tokens and an error, not its cents.
func (m *Metrics) CountCharge(route string, rec storage.UsageRecord, cents int64, err error) {
	if m == nil {
		return
	}
	m.observeLedgerLag(rec.Finished)
	rt, ok := routeNumbered(route)
	if !ok {
		m.countChargeOf(route, rec, cents, err)
		return
	}
	s := &m.series.routes[rt]
	addCount(s.promptTokens.get(func() prometheus.Counter { return m.tokens.WithLabelValues(route, "prompt") }), rec.PromptTokens)
	addCount(s.completionTokens.get(func() prometheus.Counter { return m.tokens.WithLabelValues(route, "completion") }), rec.CompletionTokens)
	if err != nil {
		s.chargeErrors.get(func() prometheus.Counter { return m.chargeErrors.WithLabelValues(route) }).Inc()
		return
	}
	addCount(s.cents.get(func() prometheus.Counter { return m.cents.WithLabelValues(route) }), cents)
}

// countChargeOf is CountCharge of a route that is none of the route
// label's values, whose series are not kept.
func (m *Metrics) countChargeOf(route string, rec storage.UsageRecord, cents int64, err error) {
	addCount(m.tokens.WithLabelValues(route, "prompt"), rec.PromptTokens)
	addCount(m.tokens.WithLabelValues(route, "completion"), rec.CompletionTokens)
	if err != nil {
		m.chargeErrors.WithLabelValues(route).Inc()
		return
	}
	addCount(m.cents.WithLabelValues(route), cents)
}

// addCount adds n to c when it is positive. A Prometheus counter panics
// on a negative add, and these run on the ledger writer's goroutine,
// where a panic used to end the process: the counts are normalised
// before they get here (billing.Usage.Normalized) and a charge is never
// negative, but a metric is no place to find out that one was.
func addCount(c prometheus.Counter, n int64) {
	if n > 0 {
		c.Add(float64(n))
	}
}

// ObserveFirstByte records how long the upstream took to answer a /v1
// request that started at start.
func (m *Metrics) ObserveFirstByte(start time.Time) {
	if m == nil {
		return
	}
	m.upstreamFirst.Observe(time.Since(start).Seconds())
}

// ObserveTool counts one finished tool call; it is the orchestrator's
// translator.Config.ToolObserver, which passes only registered tool
// names and translator.ToolUnknown, so the tool label stays bounded.
func (m *Metrics) ObserveTool(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolRuns.WithLabelValues(tool, outcome).Inc()
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
}
