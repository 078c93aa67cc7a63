package caddymodules

import (
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/httpstatus"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/routing"
	"github.com/switchyardhq/switchyard/telemetry"
	"github.com/switchyardhq/switchyard/translator/request"
)

// countRequest counts one finished request, whose state is st. err is
// what the handlers returned: when they wrote nothing, handle_errors
// answers it with the envelope of switchyard_error, which
// httpstatus.Envelope predicts.
func countRequest(m *telemetry.Metrics, st *requestState, r *http.Request, w *telemetry.Writer, err error, panicked bool) {
	status, code := w.Status(), w.Code()
	if status == 0 {
		switch {
		case err != nil:
			status = http.StatusInternalServerError
			if he, ok := errors.AsType[caddyhttp.HandlerError](err); ok && he.StatusCode != 0 {
				status = he.StatusCode
			}
			e := httpstatus.Envelope(status, r)
			status, code = e.Status, e.Code
		case panicked:
			status = http.StatusInternalServerError
		default:
			status = http.StatusOK // net/http's answer to a handler that wrote nothing
		}
	}
	if code == "" {
		code = telemetry.CodeNone
	}
	upstream := m.Upstream()
	finishActivity(st, r, w, status, code, upstream)
	model := st.requestedModel(r)
	st.line.Outcome(model, code, upstream)
	m.CountRequest(r, w, status, code, model)
}

// metricsFor is the process's metrics as config a labels them
// (telemetry.Metrics.ForConfig).
func (a *App) metricsFor(m *telemetry.Metrics) *telemetry.Metrics {
	upstream := ""
	if len(a.Models) == 0 && a.settings.Upstream != nil {
		upstream = a.settings.Upstream.Host
	}
	var prices map[string]policy.ModelPrice
	if a.Limits != nil {
		prices = a.Limits.Prices
	}
	return m.ForConfig(routing.ModelNames(a.Models, a.settings.UpstreamModel, prices), upstream)
}

// requestedModel is the model r's body asked for, as the admission step
// or a handler parsed it; "" when none did.
func requestedModel(r *http.Request) string { return stateOf(r.Context()).requestedModel(r) }

// requestedModel is requestedModel of r, whose state s is.
func (s *requestState) requestedModel(r *http.Request) string {
	if m := s.v1Model(); m != "" {
		return m
	}
	if s.chatModel != "" {
		return s.chatModel
	}
	if v, ok := caddyhttp.GetVar(r.Context(), chatRequestVar).(*request.Request); ok && v != nil {
		return v.Model
	}
	return ""
}
