package caddymodules

import (
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy/limits"
)

func init() {
	// Registered after switchyard_auth (auth.go sorts first), so both land
	// before reverse_proxy in that order.
	registerHandler[Limits](httpcaddyfile.Before, "reverse_proxy")
}

// Limits enforces, after switchyard_auth, the limits of the active revision
// profile on every authenticated request, in this order:
//
//  1. the balance gate: a request that can cost money (any method but GET,
//     HEAD, DELETE and OPTIONS, except file uploads) reserves an estimate of its cost
//     (billing.HoldEstimate) against its account's balance less what the
//     account's requests in flight hold; an account that cannot cover
//     even the minimum charge gets 402 insufficient_balance;
//  2. the request rate per API key, and for a streaming request
//     ("stream": true in its JSON body) one of the key's concurrent-stream
//     slots: 429 rate_limit_exceeded when either is exhausted, with
//     Retry-After.
//
// All of it is one limits.Admit, asked by billing.Admit: a request refused
// by one check consumes nothing of the others. The body is read and parsed
// once, strictly, here (probeBody), and the parse is handed to the
// handlers after this one. The hold is settled by whoever records the
// request's charge and released when the handlers after this one return. Every
// response that passed the rate check carries OpenAI's
// x-ratelimit-limit-requests, x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests headers. A stream's slot is held until the
// handlers after this one return, whether the stream ended, the client went
// away, the upstream failed or a handler panicked.
type Limits struct {
	appHandler
}

// CaddyModule returns the Caddy module information.
func (Limits) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_limits",
		New: func() caddy.Module { return new(Limits) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Limits) Provision(ctx caddy.Context) error { return h.provisionApp(ctx) }

// ServeHTTP implements caddyhttp.MiddlewareHandler: the body probe, then
// billing.Admit, whose refusals become the client's error.
func (h *Limits) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	p, ok := h.principal(w, r)
	if !ok {
		return nil
	}
	prof := h.app.Profile()
	ask, err := probeBody(r, h.app.Limits.maxBodyBytes(), h.app.bodies, prof)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	adm, err := billing.Admit(r.Context(), h.app.Limiter(), prof, p, ask)
	h.app.metrics.countAdmission(adm, err)
	limits.SetHeaders(w.Header(), adm.Rate)
	if err != nil {
		if errors.Is(err, limits.ErrUnavailable) {
			h.logger.Warn("limits unavailable, request refused", zap.String("key_id", p.KeyID), zap.Error(err))
		}
		apierror.Write(w, billing.Refusal(err, p.BalanceCents))
		return nil
	}
	if adm.Lease != nil {
		defer adm.Lease.Release()
	}
	if adm.Hold != nil {
		// The charge settles the hold first (the meter, the chat
		// handler); this frees it whatever happened, a panic included.
		defer adm.Hold.Release()
		caddyhttp.SetVar(r.Context(), holdVar, adm.Hold)
	}
	return next.ServeHTTP(w, r)
}

// holdVar holds the request's *limits.Hold, for whoever records its charge
// to settle.
const holdVar = "switchyard.hold"

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_limits
//
// The limits themselves are set in the switchyard global option.
func (h *Limits) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return noArgs(d, "switchyard_limits takes no arguments; set limits in the switchyard global option")
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Limits)(nil)
	_ caddyhttp.MiddlewareHandler = (*Limits)(nil)
	_ caddyfile.Unmarshaler       = (*Limits)(nil)
)
