package caddymodules

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/httpstatus"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/routing"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/telemetry"
	"github.com/switchyardhq/switchyard/tools/artifacts"
	"github.com/switchyardhq/switchyard/tools/openurl"
	"github.com/switchyardhq/switchyard/tools/toolset"
	"github.com/switchyardhq/switchyard/translator"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

func init() {
	registerHandler[Chat](httpcaddyfile.After, "reverse_proxy")
}

// Chat serves POST /v3/chat/completions and POST /v3/responses: the
// enriched assistant API of the spec, in the chat form and in the
// Responses API's form, built from plain chat completions of the
// configured upstream. It
// takes a JSON body only (415 otherwise, billing.CheckBody), validates the
// request, runs the tool loop against the upstream, streams
// activity events and usage, and charges the account per token. It needs
// switchyard_auth (and normally switchyard_limits) in front of it.
type Chat struct {
	// Operator text added to the service system prompt. Default: none.
	Instructions string `json:"instructions,omitempty"`

	// Most upstream calls one request may make; the last is offered no
	// tools, so it must answer. Default: 8.
	MaxRounds int `json:"max_rounds,omitempty"`

	// Longest a tool call may take. Default: 2m.
	ToolTimeout caddy.Duration `json:"tool_timeout,omitempty"`

	// Bound on the time from sending a request upstream to its first
	// event: queueing and prompt processing. Default: 120s.
	FirstByteTimeout caddy.Duration `json:"first_byte_timeout,omitempty"`

	// Bound on the silence between two events of an upstream stream.
	// Default: 120s.
	IdleTimeout caddy.Duration `json:"idle_timeout,omitempty"`

	appHandler
	limits request.Limits
	orch   *translator.Orchestrator // nil when no upstream is configured
	up     *upstream.Client
}

// CaddyModule returns the Caddy module information.
func (Chat) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_chat",
		New: func() caddy.Module { return new(Chat) },
	}
}

// Provision wires the orchestrator to the app's store, files and queue.
func (h *Chat) Provision(ctx caddy.Context) error {
	if err := h.provisionApp(ctx); err != nil {
		return err
	}
	app := h.app
	store := app.Store()
	fileSvc, err := app.FilesService()
	if err != nil {
		return err
	}
	prof := app.Profile()
	reg, err := toolset.New(toolset.Config{
		Memory:    store,
		Search:    app.settings.Search,
		OpenURL:   openurl.Options{Allow: app.settings.OpenURLAllow},
		Artifacts: artifacts.Config{Files: fileSvc},
	})
	if err != nil {
		return fmt.Errorf("switchyard_chat: %v", err)
	}
	h.limits = chatLimits(prof)
	usage := h.settlingRecorder(telemetry.RouteV3Chat, "recording /v3 usage")
	cfg := translator.Config{
		Profile:      prof,
		Tools:        reg,
		Memory:       store,
		Files:        &translator.Opener{Files: fileSvc, MaxImageBytes: prof.MaxInlineImage},
		IDs:          store,
		Outputs:      fileSvc,
		Usage:        usage,
		Instructions: h.Instructions,
		MaxRounds:    h.MaxRounds,
		ToolTimeout:  time.Duration(h.ToolTimeout),
		Logger:       slogFor(h.logger),
		ToolObserver: app.metrics.ObserveTool,
	}
	app.Tools.Apply(&cfg)
	if q := app.Queue(); q != nil {
		cfg.Admit = func(ctx context.Context, onPosition func(int)) (func(), error) {
			return limits.EnterQueue(ctx, q, onPosition)
		}
	}
	s := app.settings
	switch {
	case app.pools != nil:
		// The models' pools, the very ones /v1 uses: each round goes
		// through the model's reverse_proxy (docs/routing.md).
		h.up, err = upstream.New(upstream.Config{
			Router:           app.pools,
			OnFallback:       app.pools.metrics.CountFallback,
			FirstByteTimeout: time.Duration(h.FirstByteTimeout),
			IdleTimeout:      time.Duration(h.IdleTimeout),
		})
	case s.Upstream == nil:
		return nil
	default:
		// Without a configured model the backend's own first model is
		// used, discovered on first use so that a backend starting up
		// after the gateway does not fail its start.
		h.up, err = upstream.New(upstream.Config{
			BaseURL:          s.Upstream.String(),
			APIKey:           s.UpstreamKey,
			Model:            s.UpstreamModel,
			DiscoverModel:    true,
			FirstByteTimeout: time.Duration(h.FirstByteTimeout),
			IdleTimeout:      time.Duration(h.IdleTimeout),
		})
	}
	if err != nil {
		return fmt.Errorf("switchyard_chat: %v", err)
	}
	cfg.Upstream = h.up
	h.orch, err = translator.New(cfg)
	if err != nil {
		h.up.Close()
		return fmt.Errorf("switchyard_chat: %v", err)
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
//
// Its frame stays on the stack for as long as the answer streams, under
// Caddy's chain and above the orchestrator's, and an idle stream's
// goroutine keeps a stack of twice the size once that depth passes
// 16 KiB: what is done only once, before the answer, is in accept,
// whose frame is gone by then.
func (h *Chat) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	req, caller, ok := h.accept(w, r)
	if !ok {
		return nil
	}
	// The charge settles the hold (settlingRecorder); a request that was
	// never charged, failed or panicked gives it back here.
	if hold := stateOf(r.Context()).hold; hold != nil {
		defer hold.Release()
	}
	h.orch.Serve(w, r, req, caller)
	return nil
}

// accept checks r and returns its parse and caller, or writes the
// refusal and returns false.
//
//go:noinline
func (h *Chat) accept(w http.ResponseWriter, r *http.Request) (*request.Request, translator.Caller, bool) {
	if !httpstatus.AllowOnly(http.MethodPost, w, r) {
		return nil, translator.Caller{}, false
	}
	p, ok := h.principal(w, r)
	if !ok {
		return nil, translator.Caller{}, false
	}
	// switchyard_limits in front has normally checked and parsed the
	// body already.
	if err := stateOf(r.Context()).checkedBody(billing.ChatJSON, r); err != nil {
		writeRefusal(w, r, err)
		return nil, translator.Caller{}, false
	}
	req, err := parsedBody(w, r, chatRequestVar, h.app.admission.bodies, chatParser(r, h.limits))
	if err != nil {
		writeRefusal(w, r, err)
		return nil, translator.Caller{}, false
	}
	if h.app.pools != nil && !h.app.pools.table.Has(req.Model) {
		apierror.Write(w, routing.ModelNotFound(req.Model))
		return nil, translator.Caller{}, false
	}
	if h.orch == nil {
		apierror.Write(w, httpstatus.Envelope(http.StatusBadGateway, r))
		return nil, translator.Caller{}, false
	}
	letGoOfBody(r, req)
	repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	reqID, _ := repl.GetString("switchyard.request_id")
	return req, translator.Caller{AccountID: p.AccountID, KeyID: p.KeyID, RequestID: reqID, ChargeID: chargeID(r)}, true
}

// letGoOfBody drops r's body and the whole of its parse from the
// request's state and vars, where the admission step left them: they would stay
// referenced for as long as the answer streams, a long conversation
// twice over. The orchestrator is handed the parse and keeps what it
// needs of it; after this handler only the model is read
// (requestedModel, for the metrics).
func letGoOfBody(r *http.Request, req *request.Request) {
	ctx := r.Context()
	st := stateOf(ctx)
	st.body, st.chatModel = nil, req.Model
	caddyhttp.SetVar(ctx, chatRequestVar, nil)
}

// RecordUsage implements translator.UsageRecorder: a /v3 charge is
// settled as the meter settles a /v1 one. It returns the price without
// waiting for the commit: the charge id is the server's own and new, so
// the price is what the ledger is charged, and cost_cents can be sent
// before the commit.
func (s settlingRecorder) RecordUsage(ctx context.Context, rec storage.UsageRecord) (int64, error) {
	return s.settle(ctx, rec), nil
}

// Cleanup implements caddy.CleanerUpper.
func (h *Chat) Cleanup() error {
	if h.up != nil {
		h.up.Close()
	}
	return nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_chat {
//		instructions       <text>
//		max_rounds         <n>
//		tool_timeout       <duration>
//		first_byte_timeout <duration>
//		idle_timeout       <duration>
//	}
func (h *Chat) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		return d.ArgErr()
	}
	return blockOptions(d, 0, "switchyard_chat", map[string]optionReader{
		"instructions":       stringOption(&h.Instructions),
		"max_rounds":         positiveIntOption(&h.MaxRounds),
		"tool_timeout":       positiveDurationOption(&h.ToolTimeout),
		"first_byte_timeout": positiveDurationOption(&h.FirstByteTimeout),
		"idle_timeout":       positiveDurationOption(&h.IdleTimeout),
	})
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Chat)(nil)
	_ caddy.CleanerUpper          = (*Chat)(nil)
	_ caddyhttp.MiddlewareHandler = (*Chat)(nil)
	_ caddyfile.Unmarshaler       = (*Chat)(nil)
)

// Validate implements caddy.Validator: a JSON config with a bad value is
// refused at load rather than replaced by a default.
func (h *Chat) Validate() error {
	switch {
	case h.MaxRounds < 0:
		return fmt.Errorf("switchyard_chat: max_rounds %d is negative", h.MaxRounds)
	case h.ToolTimeout < 0, h.FirstByteTimeout < 0, h.IdleTimeout < 0:
		return fmt.Errorf("switchyard_chat: timeouts must not be negative")
	}
	return nil
}

var _ caddy.Validator = (*Chat)(nil)
