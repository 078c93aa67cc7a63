package telemetry

import (
	"errors"
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// panicCollector exports the panics internal/guard recovered, by the
// goroutine they happened on: switchyard_panics_recovered_total. The
// counts live in internal/guard, so every config's registry shows the
// process's whole count.
type panicCollector struct{}

var panicsDesc = prometheus.NewDesc("switchyard_panics_recovered_total",
	"Panics recovered on the gateway's own goroutines, by goroutine; each was logged with its stack and the process went on serving.",
	[]string{"goroutine"}, nil)

func (panicCollector) Describe(ch chan<- *prometheus.Desc) { ch <- panicsDesc }

func (panicCollector) Collect(ch chan<- prometheus.Metric) {
	guard.Each(func(name string, n uint64) {
		ch <- prometheus.MustNewConstMetric(panicsDesc, prometheus.CounterValue, float64(n), name)
	})
}

// CollectorGoroutine names what scrapes run of the gateway's own code,
// as internal/guard counts its panics: the registry gathers on
// goroutines of its own, where a panic would end the process.
var CollectorGoroutine = guard.Name("metrics_collector")

// guardedRead is read, with a panic in it recovered, logged and counted,
// and the sample NaN.
func guardedRead(read func() float64) func() float64 {
	return func() float64 {
		v := math.NaN()
		_ = guard.Run(CollectorGoroutine, func() { v = read() })
		return v
	}
}

// RegisterGauge registers switchyard_<name>, which calls read when
// scraped. Unlike the counters a gauge is made per config: it holds no
// count to keep across a reload, and each config reads its own state (the
// queue it made, the ledger writer of its store). A gauge reg already
// holds is kept, so provisioning twice on one registry does not fail.
func RegisterGauge(reg prometheus.Registerer, name, help string, read func() float64) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "switchyard", Name: name, Help: help}, guardedRead(read))
	var errs []error
	Reuse(reg, &g, &errs)
	return errors.Join(errs...)
}

// RegisterLedgerGauge registers switchyard_ledger_pending: charges handed
// to the ledger writer and not yet committed.
func RegisterLedgerGauge(reg prometheus.Registerer, w *billing.LedgerWriter) error {
	return RegisterGauge(reg, "ledger_pending",
		"Charges handed to the ledger writer whose commit has not completed; their holds are still in place.",
		func() float64 { return float64(w.Pending()) })
}

// RegisterQueueGauge registers switchyard_queue_waiting.
func RegisterQueueGauge(reg prometheus.Registerer, q *limits.Queue) error {
	return RegisterGauge(reg, "queue_waiting", "Requests waiting in this process for an admission queue slot.",
		func() float64 { return float64(q.Waiting()) })
}
