package caddymodules

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

func init() {
	caddy.RegisterModule(Meter{})
	httpcaddyfile.RegisterHandlerDirective("switchyard_meter", parseMeter)
	// After switchyard_auth and switchyard_limits (registered earlier),
	// before reverse_proxy and switchyard_proxy.
	httpcaddyfile.RegisterDirectiveOrder("switchyard_meter", httpcaddyfile.Before, "reverse_proxy")
}

// Meter charges the legacy /v1 API per token, like /v3: it reads the
// usage the backend reports in each successful POST answer (the "usage"
// of a JSON answer or of a stream's final chunk) and records and charges
// it once per request id. A stream whose client did not ask for usage is
// asked for it upstream, and the extra usage chunk is removed again, so
// the client sees the stream it asked for. A stream that breaks off before
// its usage is charged by estimate. Requests the backend refuses are not
// charged. It needs switchyard_auth in front of it.
type Meter struct {
	app      *App
	recorder *billing.Recorder
	logger   *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Meter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_meter",
		New: func() caddy.Module { return new(Meter) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Meter) Provision(ctx caddy.Context) error {
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.app = app
	h.recorder = &billing.Recorder{Store: app.Store(), Profile: app.Profile()}
	h.logger = ctx.Logger()
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Meter) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	p, ok := policy.PrincipalFrom(r.Context())
	if !ok || r.Method != http.MethodPost || r.Body == nil {
		return next.ServeHTTP(w, r)
	}
	body, err := requestBody(r, h.app.Limits.maxBodyBytes())
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	sent, stream, dropUsage := billing.RequestUsage(body)
	r.Body = io.NopCloser(bytes.NewReader(sent))
	r.ContentLength = int64(len(sent))
	r.Header.Set("Content-Length", strconv.Itoa(len(sent)))

	mw := &meterWriter{ResponseWriter: w, meter: billing.NewMeter(stream, dropUsage)}
	started := time.Now()
	err = next.ServeHTTP(mw, r)
	if mw.status < 200 || mw.status > 299 {
		return err
	}
	prompt, completion, estimated := mw.meter.Usage()
	if estimated && !stream {
		return err // an answer without usage is not a completion
	}
	if estimated && prompt == 0 {
		prompt = billing.EstimatePromptTokens(body)
	}
	outcome := storage.OutcomeCompleted
	if estimated {
		outcome = storage.OutcomeClientGone
		if r.Context().Err() == nil {
			outcome = storage.OutcomeUpstreamFailed
		}
	}
	repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	reqID, _ := repl.GetString("switchyard.request_id")
	var model struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &model)
	// The client may be gone; the charge is still owed.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	if _, rerr := h.recorder.RecordUsage(ctx, storage.UsageRecord{
		AccountID:        p.AccountID,
		KeyID:            p.KeyID,
		RequestID:        reqID,
		Model:            model.Model,
		Stream:           stream,
		PromptTokens:     prompt,
		CompletionTokens: completion,
		Estimated:        estimated,
		Rounds:           1,
		Outcome:          outcome,
		Started:          started,
		Finished:         time.Now(),
	}); rerr != nil {
		h.logger.Error("recording /v1 usage", zap.String("request_id", reqID), zap.Error(rerr))
	}
	return err
}

// meterWriter passes a response through a billing.Meter.
type meterWriter struct {
	http.ResponseWriter
	meter  *billing.Meter
	status int
}

func (w *meterWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	if w.status >= 200 && w.status <= 299 && code >= 200 {
		// The usage chunk may be removed: the length is no longer known.
		w.Header().Del("Content-Length")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *meterWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.status < 200 || w.status > 299 {
		return w.ResponseWriter.Write(p)
	}
	if out := w.meter.Write(p); len(out) > 0 {
		if _, err := w.ResponseWriter.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the underlying writer, so
// that streams are still flushed chunk by chunk.
func (w *meterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// parseMeter sets up the handler from Caddyfile tokens. Syntax:
//
//	switchyard_meter
func parseMeter(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Meter)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler.
func (h *Meter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() || d.NextBlock(0) {
		return d.Err("switchyard_meter takes no arguments")
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Meter)(nil)
	_ caddyhttp.MiddlewareHandler = (*Meter)(nil)
	_ caddyfile.Unmarshaler       = (*Meter)(nil)
)
