package caddymodules

import (
	"bytes"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/httpstatus"
	"github.com/switchyardhq/switchyard/routing"
)

// servedVar holds the servedBy of a /v1 request routed to a pool, for
// the meter's usage record.
const servedVar = "switchyard.served"

// servedBy names the model and upstream that answered a request.
type servedBy struct{ model, upstream string }

// serveModels serves a /v1 request, already admitted, from the pools:
// the model lists itself, and everything else by the pool of the
// request's model, then by its fallbacks while nothing was written.
// st is the request's state.
func (h *Proxy) serveModels(w http.ResponseWriter, r *http.Request, st *requestState, next caddyhttp.Handler) error {
	rest := r.URL.Path[len(h.Prefix):]
	if r.Method == http.MethodGet {
		routing.ServeGet(w, rest, &h.pools.table, h.pools.created)
		return nil
	}
	// Normally the meter in front has parsed the body already.
	req, err := parsedV1(w, r, st, h.bodies, h.admission.v1ParseOf(r))
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	chain, ok := h.pools.chain(req.Model, next)
	if !ok {
		apierror.Write(w, routing.ModelNotFound(req.Model))
		return nil
	}
	// A stream that stalls is cut as on the single upstream; the watch
	// starts with the headers, so retries and fallbacks before them are
	// bounded by the pools' own timeouts.
	w, r, gen, err := h.startGeneration(w, r, st)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	defer gen.done()

	state := routing.NewState(req.Body, req.Model)
	caddyhttp.SetVar(r.Context(), routeStateVar, state) // for a cost shown as the answer passes
	u := *r.URL
	u.Path, u.RawPath = rest, ""
	pr := r.WithContext(routing.WithState(r.Context(), state))
	pr.URL = &u
	pr.Body = io.NopCloser(bytes.NewReader(req.Body))
	pr.ContentLength = int64(len(req.Body))

	out := routing.Fallback(w, pr, chain, poolFailed, func(from, to poolRoute, err error) {
		h.logger.Info("model pool failed before answering; trying the fallback",
			zap.String("model", from.name), zap.String("fallback", to.name), zap.Error(err))
		h.pools.metrics.CountFallback(from.name, to.name)
	})
	err = out.Err
	if state.Upstream != "" {
		caddyhttp.SetVar(r.Context(), servedVar, servedBy{model: state.Model, upstream: state.Upstream})
		st.line.Served(state.Upstream, state.Model, state.Attempts, out.Fallbacks)
	}
	if err != nil && !out.Wrote {
		// Every pool failed before answering; the upstreams' own error
		// bodies are not passed on, as they were several.
		status := http.StatusBadGateway
		if he, ok := err.(caddyhttp.HandlerError); ok && he.StatusCode == http.StatusServiceUnavailable {
			status = http.StatusServiceUnavailable
		}
		h.logger.Warn("no upstream answered", zap.String("model", req.Model), zap.Error(err))
		apierror.Write(w, poolUnavailable(status))
		return nil
	}
	return err
}

// poolUnavailable is the answer when no upstream of a model or its
// fallbacks could start an answer: 503 when none was available to try
// (all out of their pools), else 502.
func poolUnavailable(status int) *apierror.Error {
	if status == http.StatusServiceUnavailable {
		return apierror.New(status, apierror.TypeServer, "upstream_unavailable",
			"No backend of this model is available. Retry with backoff.")
	}
	return httpstatus.Envelope(http.StatusBadGateway, nil)
}
