package telemetry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// RouteOf names the API a request path belongs to, in any letter case,
// as Caddy's path matchers see it.
func RouteOf(path string) string { return routeLabels[routeOfPath(path)] }

func routeOfPath(path string) route {
	if !isASCII(path) {
		// Two letters outside ASCII lower into it, İ to i and the Kelvin
		// sign to k, as Caddy's matchers lower paths.
		path = strings.ToLower(path)
	}
	switch {
	case equalLower(path, "/v1") || hasLowerPrefix(path, "/v1/"):
		return routeV1
	case equalLower(path, "/v3/chat/completions"), equalLower(path, "/v3/responses"):
		// One handler, one charge: the assistant in either form.
		return routeV3Chat
	case equalLower(path, "/v3/files") || hasLowerPrefix(path, "/v3/files/"):
		return routeV3Files
	}
	return routeOther
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// equalLower reports whether s is lower, an ASCII lower-case name, in
// ASCII's letter case: strings.ToLower(s) == lower for an ASCII s,
// without the copy ToLower makes of a name with capitals.
func equalLower(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasLowerPrefix is strings.HasPrefix(strings.ToLower(s), lower) for
// an ASCII lower-case prefix, as equalLower.
func hasLowerPrefix(s, lower string) bool {
	return len(s) >= len(lower) && equalLower(s[:len(lower)], lower)
}

// Upstream is the host of the config's one upstream, "" with model
// pools: for the access log.
func (m *Metrics) Upstream() string {
	if m == nil {
		return ""
	}
	return m.upstream
}

// CountRequest counts one finished request, answered with status and the
// envelope code (CodeNone for none), that asked for model ("" for none).
func (m *Metrics) CountRequest(r *http.Request, w *Writer, status int, code, model string) {
	if m == nil {
		return
	}
	rt := routeOfPath(r.URL.Path)
	m.series.routes[rt].requests.get(statusCode{status, code}, func(k statusCode) prometheus.Counter {
		return m.requests.WithLabelValues(routeLabels[rt], statusLabel(k.status), k.code)
	}).Inc()
	m.observeRequest(rt, w, model)
}

// statusLabels are the status label's values of the statuses HTTP has,
// made once: strconv.Itoa would make each anew on every request.
var statusLabels = func() (l [600]string) {
	for status := 100; status < len(l); status++ {
		l[status] = strconv.Itoa(status)
	}
	return l
}()

// statusLabel is the status label's value of status.
func statusLabel(status int) string {
	if status >= 100 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

// Values of the model label of the request histograms besides the
// configured models' names: a model the config does not name (clients
// choose the string, so it cannot be a label of its own), and a request
// that names none (GET /v1/models, files).
const (
	modelOther = "other"
	modelNone  = "none"
)

// requestMetrics are the series of a request's timing and of what is in
// flight, kept with the other collectors in metrics.
type requestMetrics struct {
	duration  *prometheus.HistogramVec // route, model
	firstByte *prometheus.HistogramVec // route, model
	streams   *prometheus.GaugeVec     // route
	admin     *prometheus.CounterVec   // method, status
	ledgerLag prometheus.Histogram
}

// latencyBuckets cover a cached answer in milliseconds to a long stream
// or a slow first token of a large model under load.
var latencyBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newRequestMetrics() requestMetrics {
	const ns = "switchyard"
	return requestMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "request_duration_seconds",
			Help:    "Time from switchyard_auth receiving a request to the end of its response, streams included, by route and model asked for.",
			Buckets: latencyBuckets,
		}, []string{"route", "model"}),
		firstByte: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "time_to_first_byte_seconds",
			Help:    "Time from switchyard_auth receiving a request to the first byte of its response body, by route and model asked for: for a stream, about the time to its first token.",
			Buckets: latencyBuckets,
		}, []string{"route", "model"}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "streams_in_flight",
			Help: "Event-stream responses this process is writing, by route.",
		}, []string{"route"}),
		admin: counterVec("admin_requests_total",
			"Requests to the admin API, by method and final status.",
			"method", "status"),
		ledgerLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Name: "ledger_lag_seconds",
			Help:    "Time from the end of a billed request to its charge committed by the ledger writer (or failed).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
}

func (rm *requestMetrics) register(reg prometheus.Registerer, errs *[]error) {
	Reuse(reg, &rm.duration, errs)
	Reuse(reg, &rm.firstByte, errs)
	Reuse(reg, &rm.streams, errs)
	Reuse(reg, &rm.admin, errs)
	Reuse(reg, &rm.ledgerLag, errs)
}

// ForConfig is m labelling the model of a request by the names a config
// serves (models), and every other name as other; upstream is the host
// of the config's one upstream, when it has no model pools, for the
// access log. It is set once per config.
func (m *Metrics) ForConfig(models []string, upstream string) *Metrics {
	if m == nil {
		return nil
	}
	out := *m
	out.upstream = upstream
	out.models = newModelTable(models)
	return &out
}

// observeRequest records the timing of one finished request of rt for
// model, and ends its stream.
func (m *Metrics) observeRequest(rt route, w *Writer, model string) {
	if w.streaming {
		m.streamsOf(rt).Dec()
	}
	s := m.models.of(model)
	s.duration[rt].get(func() prometheus.Observer {
		return m.duration.WithLabelValues(routeLabels[rt], s.label)
	}).Observe(time.Since(w.start).Seconds())
	if w.wroteBody {
		s.firstByte[rt].get(func() prometheus.Observer {
			return m.firstByte.WithLabelValues(routeLabels[rt], s.label)
		}).Observe(w.firstByte.Seconds())
	}
}

// startStream counts a response that has begun as an event stream.
func (m *Metrics) startStream(r *http.Request) {
	if m != nil {
		m.streamsOf(routeOfPath(r.URL.Path)).Inc()
	}
}

// streamsOf is the series of the streams of rt in flight.
func (m *Metrics) streamsOf(rt route) prometheus.Gauge {
	return m.series.routes[rt].streams.get(func() prometheus.Gauge {
		return m.streams.WithLabelValues(routeLabels[rt])
	})
}

// isEventStream tells a response header that starts a stream, its media
// type in any letter case (of the two letters outside ASCII that lower
// into it, İ and the Kelvin sign, neither lowers into this one).
func isEventStream(h http.Header) bool {
	return hasLowerPrefix(h.Get("Content-Type"), "text/event-stream")
}

// CountAdmin counts one finished request to the admin API.
func (m *Metrics) CountAdmin(r *http.Request, w *Writer) {
	if m == nil {
		return
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	m.admin.WithLabelValues(methodLabel(r.Method), statusLabel(status)).Inc()
}

// methodLabel bounds the method label to the methods the admin API
// answers.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return method
	}
	return "other"
}

// observeLedgerLag records how long after the request's end its charge
// was committed.
func (m *Metrics) observeLedgerLag(finished time.Time) {
	if m == nil || finished.IsZero() {
		return
	}
	m.ledgerLag.Observe(max(time.Since(finished).Seconds(), 0))
}
