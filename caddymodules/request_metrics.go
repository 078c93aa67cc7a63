package caddymodules

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/translator/request"
)

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
	reuse(reg, &rm.duration, errs)
	reuse(reg, &rm.firstByte, errs)
	reuse(reg, &rm.streams, errs)
	reuse(reg, &rm.admin, errs)
	reuse(reg, &rm.ledgerLag, errs)
}

// forConfig is m labelling the model of a request by the names the
// config serves, and every other name as other, and logging the config's
// one upstream when it has no model pools. It is set once per config.
func (m *metrics) forConfig(a *App) *metrics {
	if m == nil {
		return nil
	}
	out := *m
	models := a.modelNames()
	if len(a.Models) == 0 && a.settings.upstream != nil {
		out.upstream = a.settings.upstream.Host
	}
	out.models = make(map[string]bool, len(models))
	for _, name := range models {
		if name != "" {
			out.models[name] = true
		}
	}
	return &out
}

// modelNames are the names a config serves: the models' names, the
// upstream's model and the models with a price.
func (a *App) modelNames() []string {
	var names []string
	for _, m := range a.Models {
		names = append(names, m.Name)
	}
	names = append(names, a.settings.upstreamModel)
	if a.Limits != nil {
		for name := range a.Limits.Prices {
			names = append(names, name)
		}
	}
	return names
}

// requestedModel is the model r's body asked for, as the admission step
// or a handler parsed it; "" when none did.
func requestedModel(r *http.Request) string {
	if v, ok := caddyhttp.GetVar(r.Context(), v1RequestVar).(billing.V1Request); ok && v.Model != "" {
		return v.Model
	}
	if v, ok := caddyhttp.GetVar(r.Context(), chatRequestVar).(*request.Request); ok && v != nil {
		return v.Model
	}
	return ""
}

// modelLabel is the model label of r: the model it asked for, bounded to
// the configured names.
func (m *metrics) modelLabel(r *http.Request) string {
	model := requestedModel(r)
	switch {
	case model == "":
		return modelNone
	case m.models[model]:
		return model
	}
	return modelOther
}

// observeRequest records the timing of one finished request, and ends
// its stream.
func (m *metrics) observeRequest(r *http.Request, w *statusWriter) {
	route := routeOf(r.URL.Path)
	if w.streaming {
		m.streams.WithLabelValues(route).Dec()
	}
	model := m.modelLabel(r)
	m.duration.WithLabelValues(route, model).Observe(time.Since(w.start).Seconds())
	if !w.firstByte.IsZero() {
		m.firstByte.WithLabelValues(route, model).Observe(w.firstByte.Sub(w.start).Seconds())
	}
}

// startStream counts a response that has begun as an event stream.
func (m *metrics) startStream(r *http.Request) {
	if m != nil {
		m.streams.WithLabelValues(routeOf(r.URL.Path)).Inc()
	}
}

// isEventStream tells a response header that starts a stream.
func isEventStream(h http.Header) bool {
	return strings.HasPrefix(strings.ToLower(h.Get("Content-Type")), "text/event-stream")
}

// countAdmin counts one finished request to the admin API.
func (m *metrics) countAdmin(r *http.Request, w *statusWriter) {
	if m == nil {
		return
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	m.admin.WithLabelValues(methodLabel(r.Method), strconv.Itoa(status)).Inc()
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
func (m *metrics) observeLedgerLag(finished time.Time) {
	if m == nil || finished.IsZero() {
		return
	}
	m.ledgerLag.Observe(max(time.Since(finished).Seconds(), 0))
}
