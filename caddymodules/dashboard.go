package caddymodules

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/admin/dashboard"
)

func init() {
	registerHandler[Dashboard](httpcaddyfile.After, "reverse_proxy")
}

// Dashboard serves the account dashboard, static files embedded in the
// binary, with a strict Content-Security-Policy (docs/dashboard.md). The
// page signs in with an admin token and calls the admin API on the same
// origin, so the admin API must be routed on the same site.
type Dashboard struct {
	// The path the dashboard is served under; a request for it without
	// the final slash is redirected. Default: /dashboard/.
	Prefix string `json:"prefix,omitempty"`

	handler *dashboard.Handler
}

// CaddyModule returns the Caddy module information.
func (Dashboard) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_dashboard",
		New: func() caddy.Module { return new(Dashboard) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Dashboard) Provision(caddy.Context) error {
	if h.Prefix == "" {
		h.Prefix = "/dashboard/"
	}
	h.handler = dashboard.New(h.Prefix)
	return nil
}

// Validate implements caddy.Validator.
func (h *Dashboard) Validate() error {
	if h.Prefix != "" && (!strings.HasPrefix(h.Prefix, "/") || !strings.HasSuffix(h.Prefix, "/")) {
		return fmt.Errorf("switchyard_dashboard: prefix %q must start and end with /", h.Prefix)
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	h.handler.ServeHTTP(w, r)
	return nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_dashboard [<prefix>]
func (h *Dashboard) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return optionalArg(d, &h.Prefix)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Dashboard)(nil)
	_ caddy.Validator             = (*Dashboard)(nil)
	_ caddyhttp.MiddlewareHandler = (*Dashboard)(nil)
	_ caddyfile.Unmarshaler       = (*Dashboard)(nil)
)
