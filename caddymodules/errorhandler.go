package caddymodules

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/httpstatus"
)

func init() {
	registerHandler[Error](httpcaddyfile.After, "respond")
}

// Error answers with the API's error envelope instead of an HTML or empty
// page. With a status it answers that status: for routes that do not exist
// (404) or are not available in this build (501). Without one, inside
// handle_errors, it renders the error Caddy is handling, so that failures
// raised by Caddy itself (an unreachable upstream, a body too large) reach
// API clients in the same envelope as every other error.
type Error struct {
	// HTTP status to answer. Default: 0, the status of the error being
	// handled, or 500 when there is none.
	StatusCode int `json:"status_code,omitempty"`
	// Error code for the envelope. Default: derived from the status.
	Code string `json:"code,omitempty"`
	// Message for the envelope. Default: derived from the status.
	Message string `json:"message,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Error) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_error",
		New: func() caddy.Module { return new(Error) },
	}
}

// Validate implements caddy.Validator.
func (h *Error) Validate() error {
	if h.StatusCode != 0 && (h.StatusCode < 400 || h.StatusCode > 599) {
		return fmt.Errorf("status %d is not an error status", h.StatusCode)
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Error) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	status := h.StatusCode
	if status == 0 {
		status = http.StatusInternalServerError
		if herr, ok := r.Context().Value(caddyhttp.ErrorCtxKey).(error); ok {
			var he caddyhttp.HandlerError
			if errors.As(herr, &he) && he.StatusCode != 0 {
				status = he.StatusCode
			}
		}
	}
	e := httpstatus.Envelope(status, r)
	if h.Code != "" {
		e.Code = h.Code
	}
	if h.Message != "" {
		e.Message = h.Message
	}
	apierror.Write(w, e)
	return nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_error [<status> [<code> [<message>]]]
func (h *Error) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	args := d.RemainingArgs()
	if len(args) > 3 {
		return d.ArgErr()
	}
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return d.Errf("bad status %q", args[0])
		}
		h.StatusCode = n
	}
	if len(args) > 1 {
		h.Code = args[1]
	}
	if len(args) > 2 {
		h.Message = args[2]
	}
	if d.NextBlock(0) {
		return d.Err("switchyard_error takes no block")
	}
	return nil
}

// Interface guards
var (
	_ caddy.Validator             = (*Error)(nil)
	_ caddyhttp.MiddlewareHandler = (*Error)(nil)
	_ caddyfile.Unmarshaler       = (*Error)(nil)
)
