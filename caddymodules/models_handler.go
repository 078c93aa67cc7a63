package caddymodules

import (
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/httpstatus"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/routing"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

func init() {
	registerHandler[Models](httpcaddyfile.After, "reverse_proxy")
}

// Models serves GET /v3/models: the models this gateway serves, in
// OpenAI's list shape. With a models block these are the configured
// models; without one, the single upstream's model (the configured one,
// or the upstream's first as /v3 discovers it).
type Models struct {
	pools   *pools
	single  *upstream.Client // without models; nil without an upstream
	started int64
}

// CaddyModule returns the Caddy module information.
func (Models) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_models",
		New: func() caddy.Module { return new(Models) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Models) Provision(ctx caddy.Context) error {
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.pools = app.pools
	h.started = time.Now().Unix()
	if s := app.settings; h.pools == nil && s.Upstream != nil {
		h.single, err = upstream.New(upstream.Config{
			BaseURL: s.Upstream.String(), APIKey: s.UpstreamKey, Model: s.UpstreamModel, DiscoverModel: true,
		})
		if err != nil {
			return fmt.Errorf("switchyard_models: %v", err)
		}
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Models) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if !httpstatus.AllowOnly(http.MethodGet, w, r) {
		return nil
	}
	p, _ := principalOf(r.Context())
	w, shown, err := policy.ModelView(w, r, "/v3", p)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	defer shown()
	switch {
	case h.pools != nil:
		routing.WriteModelList(w, h.pools.table.Names(), h.pools.created)
	case h.single == nil:
		apierror.Write(w, httpstatus.Envelope(http.StatusBadGateway, r))
	default:
		name, err := h.single.Model(r.Context())
		if err != nil {
			apierror.Write(w, httpstatus.Envelope(http.StatusBadGateway, r))
			return nil
		}
		routing.WriteModelList(w, []string{name}, h.started)
	}
	return nil
}

// Cleanup implements caddy.CleanerUpper.
func (h *Models) Cleanup() error {
	if h.single != nil {
		h.single.Close()
	}
	return nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_models
func (h *Models) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return noArgs(d, "switchyard_models takes no arguments")
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Models)(nil)
	_ caddy.CleanerUpper          = (*Models)(nil)
	_ caddyhttp.MiddlewareHandler = (*Models)(nil)
	_ caddyfile.Unmarshaler       = (*Models)(nil)
)
