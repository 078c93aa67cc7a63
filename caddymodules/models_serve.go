package caddymodules

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
)

// servedVar holds the servedBy of a /v1 request routed to a pool, for
// the meter's usage record.
const servedVar = "switchyard.served"

// servedBy names the model and upstream that answered a request.
type servedBy struct{ model, upstream string }

// modelNotFound is the answer to a request for a model not configured,
// in OpenAI's words and code.
func modelNotFound(model string) *apierror.Error {
	return apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "model_not_found",
		"The model '"+clip.Ellipsis(model, 80)+"' does not exist.")
}

// modelObject is a model in OpenAI's shape.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func modelObjectOf(name string, created int64) modelObject {
	return modelObject{ID: name, Object: "model", Created: created, OwnedBy: "switchyard"}
}

// writeModelList writes the models in OpenAI's list shape.
func writeModelList(w http.ResponseWriter, names []string, created int64) {
	data := make([]modelObject, len(names))
	for i, n := range names {
		data[i] = modelObjectOf(n, created)
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// names lists the configured models in their configured order.
func (ps *pools) names() []string {
	out := make([]string, len(ps.order))
	for i, p := range ps.order {
		out[i] = p.name
	}
	return out
}

// serveModels serves a /v1 request, already admitted, from the pools:
// the model lists itself, and everything else by the pool of the
// request's model, then by its fallbacks while nothing was written.
func (h *Proxy) serveModels(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	rest := r.URL.Path[len(h.Prefix):]
	if r.Method == http.MethodGet {
		switch {
		case rest == "/models":
			writeModelList(w, h.pools.names(), h.pools.created)
		case strings.HasPrefix(rest, "/models/") && h.pools.has(rest[len("/models/"):]):
			writeJSON(w, http.StatusOK, modelObjectOf(rest[len("/models/"):], h.pools.created))
		case strings.HasPrefix(rest, "/models/"):
			apierror.Write(w, modelNotFound(rest[len("/models/"):]))
		default:
			apierror.Write(w, apierror.New(http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_request",
				"This route cannot be served: the gateway picks a backend by the request's model."))
		}
		return nil
	}
	// Normally the meter in front has parsed the body already.
	req, err := parsedBody(w, r, v1RequestVar, h.bodies, h.admission.v1ParseOf(r))
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	chain, ok := h.pools.chain(req.Model)
	if !ok {
		apierror.Write(w, modelNotFound(req.Model))
		return nil
	}
	// A stream that stalls is cut as on the single upstream; the watch
	// starts with the headers, so retries and fallbacks before them are
	// bounded by the pools' own timeouts.
	w, r, done, err := h.startGeneration(w, r)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	defer done()

	state := &routeState{body: req.Body, bodyModel: req.Model}
	caddyhttp.SetVar(r.Context(), routeStateVar, state) // for a cost shown as the answer passes
	u := *r.URL
	u.Path, u.RawPath = rest, ""
	pr := r.WithContext(context.WithValue(r.Context(), routeStateKey{}, state))
	pr.URL = &u
	pr.Body = io.NopCloser(bytes.NewReader(req.Body))
	pr.ContentLength = int64(len(req.Body))

	tw := &writeTracker{ResponseWriter: w}
	fallbacks := 0
	for i, p := range chain {
		err = p.rp.ServeHTTP(tw, pr, next)
		if tw.wrote || !poolFailed(err) || i == len(chain)-1 || r.Context().Err() != nil {
			break
		}
		h.logger.Info("model pool failed before answering; trying the fallback",
			zap.String("model", p.name), zap.String("fallback", chain[i+1].name), zap.Error(err))
		h.pools.metrics.countFallback(p.name, chain[i+1].name)
		fallbacks++
	}
	if state.upstream != "" {
		caddyhttp.SetVar(r.Context(), servedVar, servedBy{model: state.model, upstream: state.upstream})
		if extra, ok := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
			extra.Set(zap.String("upstream", state.upstream))
			extra.Set(zap.String("model_served", state.model))
			extra.Set(zap.Int("upstream_attempts", state.attempts))
			extra.Set(zap.Int("model_fallbacks", fallbacks))
		}
	}
	if err != nil && !tw.wrote {
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
	return envelopeFor(http.StatusBadGateway, nil)
}

// writeTracker notes whether anything was written to the client, after
// which no other pool may answer.
type writeTracker struct {
	http.ResponseWriter
	wrote bool
}

func (w *writeTracker) WriteHeader(code int) {
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *writeTracker) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer below, so that
// streams still flush event by event.
func (w *writeTracker) Unwrap() http.ResponseWriter { return w.ResponseWriter }
