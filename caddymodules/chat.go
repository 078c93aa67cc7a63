package caddymodules

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/files/extract"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/memory"
	"github.com/switchyardhq/switchyard/translator"
)

func init() {
	caddy.RegisterModule(Chat{})
	httpcaddyfile.RegisterHandlerDirective("switchyard_chat", parseChat)
	httpcaddyfile.RegisterDirectiveOrder("switchyard_chat", httpcaddyfile.After, "reverse_proxy")
}

// Chat serves POST /v3/chat/completions: the enriched assistant API of the
// spec, built from plain chat completions of the configured upstream. It
// validates the request, runs the tool loop against the upstream, streams
// activity events and usage, and charges the account per token. It needs
// switchyard_auth (and normally switchyard_limits) in front of it.
type Chat struct {
	// Operator text added to the service system prompt. Default: none.
	Instructions string `json:"instructions,omitempty"`

	// Most upstream calls one request may make; the last is offered no
	// tools, so it must answer. Default: 8.
	MaxRounds int `json:"max_rounds,omitempty"`

	// Longest a tool call may take. Default: 60s.
	ToolTimeout caddy.Duration `json:"tool_timeout,omitempty"`

	// Bound on the time from sending a request upstream to its first
	// event: queueing and prompt processing. Default: 120s.
	FirstByteTimeout caddy.Duration `json:"first_byte_timeout,omitempty"`

	// Bound on the silence between two events of an upstream stream.
	// Default: 120s.
	IdleTimeout caddy.Duration `json:"idle_timeout,omitempty"`

	app    *App
	logger *zap.Logger
	limits translator.Limits
	cfg    translator.Config // everything but Upstream, filled in Provision

	built *builtChat
}

// builtChat is the orchestrator, built on first use once the upstream
// model is known.
type builtChat struct {
	mu   sync.Mutex
	orch *translator.Orchestrator
	up   *translator.Upstream
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
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.app = app
	h.logger = ctx.Logger()
	h.built = new(builtChat)
	store := app.Store()
	fileSvc, err := app.FilesService()
	if err != nil {
		return err
	}
	prof := app.Profile()

	reg := new(tools.Registry)
	if err := reg.Register(tools.EndUserMemory, &memory.Tool{Store: store}); err != nil {
		return err
	}
	h.limits = translator.Limits{Profile: prof, MaxBodyBytes: app.Limits.maxBodyBytes()}
	h.cfg = translator.Config{
		Profile:      prof,
		Tools:        reg,
		Memory:       store,
		Files:        &extract.Opener{Files: fileSvc, MaxImageBytes: prof.MaxInlineImage},
		IDs:          store,
		Usage:        &billing.Recorder{Store: store, Profile: prof},
		Instructions: h.Instructions,
		MaxRounds:    h.MaxRounds,
		ToolTimeout:  time.Duration(h.ToolTimeout),
		Logger:       slogFor(h.logger),
	}
	if q := app.Queue(); q != nil {
		h.cfg.Admit = func(ctx context.Context, onPosition func(int)) (func(), error) {
			slot, err := q.Enter(ctx, onPosition)
			if err != nil {
				return nil, limits.APIError(err)
			}
			return slot.Release, nil
		}
	}
	return nil
}

// orchestrator returns the orchestrator, building it on first use: the
// upstream model, when not configured, is the upstream's first model, and
// asking for it must not hold up the server's start.
func (h *Chat) orchestrator(r *http.Request) (*translator.Orchestrator, error) {
	b := h.built
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.orch != nil {
		return b.orch, nil
	}
	s := h.app.settings
	if s.upstream == nil {
		return nil, envelopeFor(http.StatusBadGateway, r)
	}
	model := s.upstreamModel
	if model == "" {
		m, err := firstModel(r.Context(), s.upstream, s.upstreamKey)
		if err != nil {
			h.logger.Error("asking the upstream for its models", zap.Error(err))
			return nil, envelopeFor(http.StatusBadGateway, r)
		}
		model = m
	}
	up, err := translator.NewUpstream(translator.UpstreamConfig{
		BaseURL:          s.upstream.String(),
		APIKey:           s.upstreamKey,
		Model:            model,
		FirstByteTimeout: time.Duration(h.FirstByteTimeout),
		IdleTimeout:      time.Duration(h.IdleTimeout),
	})
	if err != nil {
		return nil, err
	}
	cfg := h.cfg
	cfg.Upstream = up
	orch, err := translator.New(cfg)
	if err != nil {
		up.Close()
		return nil, err
	}
	b.orch, b.up = orch, up
	h.logger.Info("chat orchestrator ready", zap.String("upstream_model", model))
	return orch, nil
}

// firstModel asks an OpenAI-compatible backend for its models and returns
// the first.
func firstModel(ctx context.Context, base *url.URL, apiKey string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+"/models", nil)
	if err != nil {
		return "", err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /models: %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", fmt.Errorf("GET /models: %v", err)
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", fmt.Errorf("GET /models: the backend lists no model; set SWITCHYARD_UPSTREAM_MODEL")
	}
	return list.Data[0].ID, nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Chat) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apierror.Write(w, envelopeFor(http.StatusMethodNotAllowed, r))
		return nil
	}
	p, ok := policy.PrincipalFrom(r.Context())
	if !ok {
		h.logger.Error("switchyard_chat runs without switchyard_auth in front of it")
		apierror.Write(w, apierror.Internal())
		return nil
	}
	body, err := requestBody(r, h.limits.MaxBodyBytes)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	req, err := translator.ParseRequest(body, r.Header, h.limits)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	orch, err := h.orchestrator(r)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	reqID, _ := repl.GetString("switchyard.request_id")
	orch.Serve(w, r, req, translator.Caller{AccountID: p.AccountID, KeyID: p.KeyID, RequestID: reqID})
	return nil
}

// Cleanup implements caddy.CleanerUpper.
func (h *Chat) Cleanup() error {
	if h.built == nil {
		return nil
	}
	h.built.mu.Lock()
	defer h.built.mu.Unlock()
	if h.built.up != nil {
		h.built.up.Close()
	}
	return nil
}

// parseChat sets up the handler from Caddyfile tokens. Syntax:
//
//	switchyard_chat {
//		instructions       <text>
//		max_rounds         <n>
//		tool_timeout       <duration>
//		first_byte_timeout <duration>
//		idle_timeout       <duration>
//	}
func parseChat(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	c := new(Chat)
	err := c.UnmarshalCaddyfile(h.Dispenser)
	return c, err
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler.
func (h *Chat) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		opt := d.Val()
		var v string
		if err := oneArg(d, &v); err != nil {
			return err
		}
		switch opt {
		case "instructions":
			h.Instructions = v
		case "max_rounds":
			n, err := positiveInt(v)
			if err != nil {
				return d.Errf("max_rounds: %v", err)
			}
			h.MaxRounds = n
		case "tool_timeout", "first_byte_timeout", "idle_timeout":
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("%s: want a positive duration, not %q", opt, v)
			}
			switch opt {
			case "tool_timeout":
				h.ToolTimeout = caddy.Duration(dur)
			case "first_byte_timeout":
				h.FirstByteTimeout = caddy.Duration(dur)
			case "idle_timeout":
				h.IdleTimeout = caddy.Duration(dur)
			}
		default:
			return d.Errf("unrecognized switchyard_chat option %q", opt)
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Chat)(nil)
	_ caddy.CleanerUpper          = (*Chat)(nil)
	_ caddyhttp.MiddlewareHandler = (*Chat)(nil)
	_ caddyfile.Unmarshaler       = (*Chat)(nil)
)
