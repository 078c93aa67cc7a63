package caddymodules

import (
	"errors"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// metrics are Switchyard's Prometheus collectors (docs/operations.md lists
// every series). A nil *metrics counts nothing. One set exists per process and is registered on each
// config's registry, as Caddy does with its own admin metrics: a reload
// gets a fresh registry, and registering the same collectors on it keeps
// every count instead of starting them over.
type metrics struct {
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
	// models are the model names the config serves (forModels): the
	// request histograms' model label takes no other value but other
	// and none.
	models map[string]bool
	// upstream is the host of the config's one upstream when it has no
	// model pools, for the access log.
	upstream string
}

// Values of the route label.
const (
	routeV1      = "v1"
	routeV3Chat  = "v3_chat"
	routeV3Files = "v3_files"
	routeOther   = "other"
)

// Values of the decision label of switchyard_limiter_decisions_total.
const (
	decisionAdmitted      = "admitted"
	decisionRateLimited   = "rate_limited"
	decisionStreamLimited = "stream_limited"
	decisionBalance       = "insufficient_balance"
	decisionUnavailable   = "unavailable"
)

// codeNone labels responses that carry no envelope of the gateway's own:
// successes, and errors the /v1 upstream answered itself.
const codeNone = "none"

var processMetrics = newMetrics()

func newMetrics() *metrics {
	const ns = "switchyard"
	return &metrics{
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
	}
}

// register registers m on reg. A collector reg already holds is reused
// rather than refused, so provisioning twice on one registry neither
// panics nor splits a series in two.
func (m *metrics) register(reg prometheus.Registerer) (*metrics, error) {
	out := *m
	var errs []error
	reuse(reg, &out.requests, &errs)
	reuse(reg, &out.admissions, &errs)
	reuse(reg, &out.fallbacks, &errs)
	reuse(reg, &out.tokens, &errs)
	reuse(reg, &out.cents, &errs)
	reuse(reg, &out.chargeErrors, &errs)
	reuse(reg, &out.upstreamFirst, &errs)
	reuse(reg, &out.toolRuns, &errs)
	reuse(reg, &out.toolDuration, &errs)
	reuse(reg, &out.panics, &errs)
	out.requestMetrics.register(reg, &errs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &out, nil
}

// counterVec is the counter switchyard_<name>, with the given labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "switchyard", Name: name, Help: help}, labels)
}

func reuse[C prometheus.Collector](reg prometheus.Registerer, c *C, errs *[]error) {
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

// routeOf names the API a request path belongs to, in any letter case,
// as Caddy's path matchers see it.
func routeOf(path string) string {
	p := strings.ToLower(path)
	switch {
	case p == "/v1" || strings.HasPrefix(p, "/v1/"):
		return routeV1
	case p == "/v3/chat/completions":
		return routeV3Chat
	case p == "/v3/files" || strings.HasPrefix(p, "/v3/files/"):
		return routeV3Files
	}
	return routeOther
}

// countRequest counts one finished request. err is what the handlers
// returned: when they wrote nothing, handle_errors answers it with the
// envelope of switchyard_error, which envelopeFor predicts.
func (m *metrics) countRequest(r *http.Request, w *statusWriter, err error, panicked bool) {
	status, code := w.status, w.code
	if status == 0 {
		switch {
		case err != nil:
			status = http.StatusInternalServerError
			if he, ok := errors.AsType[caddyhttp.HandlerError](err); ok && he.StatusCode != 0 {
				status = he.StatusCode
			}
			e := envelopeFor(status, r)
			status, code = e.Status, e.Code
		case panicked:
			status = http.StatusInternalServerError
		default:
			status = http.StatusOK // net/http's answer to a handler that wrote nothing
		}
	}
	if code == "" {
		code = codeNone
	}
	if m == nil {
		logOutcome(r, code, "")
		return
	}
	logOutcome(r, code, m.upstream)
	m.requests.WithLabelValues(routeOf(r.URL.Path), strconv.Itoa(status), code).Inc()
	m.observeRequest(r, w)
}

// countAdmission counts the outcome of one limits.Admit.
func (m *metrics) countAdmission(adm limits.Admission, err error) {
	if m == nil {
		return
	}
	if adm.Fallback {
		m.fallbacks.Inc()
	}
	m.admissions.WithLabelValues(decisionOf(err)).Inc()
}

func decisionOf(err error) string {
	if err == nil {
		return decisionAdmitted
	}
	if _, ok := errors.AsType[*limits.BalanceError](err); ok {
		return decisionBalance
	}
	if le, ok := errors.AsType[*limits.LimitError](err); ok {
		if le.Limit == limits.LimitStreams {
			return decisionStreamLimited
		}
		return decisionRateLimited
	}
	// Redis down under fail_closed, or anything else that kept the limits
	// from deciding.
	return decisionUnavailable
}

// countCharge counts one usage record and what it charged; a charge the
// store failed to record counts its tokens and an error, not its cents.
func (m *metrics) countCharge(route string, rec storage.UsageRecord, cents int64, err error) {
	if m == nil {
		return
	}
	m.observeLedgerLag(rec.Finished)
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

// observeFirstByte records how long the upstream took to answer a /v1
// request that started at start.
func (m *metrics) observeFirstByte(start time.Time) {
	if m == nil {
		return
	}
	m.upstreamFirst.Observe(time.Since(start).Seconds())
}

// observeTool counts one finished tool call; it is the orchestrator's
// translator.Config.ToolObserver, which passes only registered tool
// names and translator.ToolUnknown, so the tool label stays bounded.
func (m *metrics) observeTool(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolRuns.WithLabelValues(tool, outcome).Inc()
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
}

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

// collectorGoroutine names what scrapes run of the gateway's own code,
// as internal/guard counts its panics: the registry gathers on
// goroutines of its own, where a panic would end the process.
var collectorGoroutine = guard.Name("metrics_collector")

// guardedRead is read, with a panic in it recovered, logged and counted,
// and the sample NaN.
func guardedRead(read func() float64) func() float64 {
	return func() float64 {
		v := math.NaN()
		_ = guard.Run(collectorGoroutine, func() { v = read() })
		return v
	}
}

// registerGauge registers switchyard_<name>, which calls read when
// scraped. Unlike the counters a gauge is made per config: it holds no
// count to keep across a reload, and each config reads its own state (the
// queue it made, the ledger writer of its store). A gauge reg already
// holds is kept, so provisioning twice on one registry does not fail.
func registerGauge(reg prometheus.Registerer, name, help string, read func() float64) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "switchyard", Name: name, Help: help}, guardedRead(read))
	var errs []error
	reuse(reg, &g, &errs)
	return errors.Join(errs...)
}

// registerLedgerGauge registers switchyard_ledger_pending: charges handed
// to the ledger writer and not yet committed.
func registerLedgerGauge(reg prometheus.Registerer, w *billing.LedgerWriter) error {
	return registerGauge(reg, "ledger_pending",
		"Charges handed to the ledger writer whose commit has not completed; their holds are still in place.",
		func() float64 { return float64(w.Pending()) })
}

// registerQueueGauge registers switchyard_queue_waiting.
func registerQueueGauge(reg prometheus.Registerer, q *limits.Queue) error {
	return registerGauge(reg, "queue_waiting", "Requests waiting in this process for an admission queue slot.",
		func() float64 { return float64(q.Waiting()) })
}

// statusWriter remembers the final status of a response and, when the
// gateway answered with its own error envelope, the envelope's code.
// Informational 1xx statuses pass through uncounted: the answer is still
// to come.
type statusWriter struct {
	http.ResponseWriter
	status int
	code   string // the apierror envelope's, told before the status

	// For the request histograms: when the request arrived, when the
	// first byte of the body left, whether the response is a stream
	// (counted in flight until the request is counted).
	start     time.Time
	firstByte time.Time
	streaming bool
	metrics   *metrics
	request   *http.Request
}

// newStatusWriter watches the response to r written to rw, counting it in
// m.
func newStatusWriter(rw http.ResponseWriter, r *http.Request, m *metrics) *statusWriter {
	return &statusWriter{ResponseWriter: rw, start: time.Now(), metrics: m, request: r}
}

func (w *statusWriter) WriteHeader(status int) {
	if status >= 200 && w.status == 0 {
		w.status = status
		if status == http.StatusOK && w.metrics != nil && isEventStream(w.Header()) {
			w.streaming = true
			w.metrics.startStream(w.request)
		}
		if status < 400 {
			w.code = ""
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.firstByte.IsZero() && len(p) > 0 {
		w.firstByte = time.Now()
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer, for
// flushing streams.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RecordErrorCode implements apierror.CodeRecorder: the code of an
// envelope written before the status is the answer's.
func (w *statusWriter) RecordErrorCode(code string) {
	if w.status != 0 {
		return
	}
	if !codePattern.MatchString(code) {
		code = "other"
	}
	w.code = code
}

// codePattern bounds the code label to what an envelope code looks like,
// so that no configured code can mint series at will.
var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
