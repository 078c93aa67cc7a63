package caddymodules

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	// Registered after switchyard_auth (auth.go sorts first), so both land
	// before reverse_proxy in that order.
	registerHandler[Limits](httpcaddyfile.Before, "reverse_proxy")
}

// Limits is the admission step of every authenticated request, after
// switchyard_auth, the same on /v1 and /v3: the limits of the active
// revision profile, the balance gate and the body, in this order (admit):
//
//  1. the body's label: each route takes the bodies its meter reads
//     (billing.BodyMeter: JSON on the metered routes, multipart/form-data
//     on uploads, none on reads); any other Content-Type, any
//     Content-Encoding, or a body where none belongs gets 415
//     unsupported_media_type before anything is counted;
//  2. before the body is read, what the node knows without asking Redis:
//     on a route that can cost money, a ledger balance (read with the
//     key) below the minimum charge, 402 insufficient_balance; a key
//     whose rate this node saw spent in Redis's answer to one of its own
//     admissions, until that answer's retry time, 429 rate_limit_exceeded
//     with Retry-After (in process, the exact rate and the balance less
//     what requests in flight hold); without a byte of the body read;
//  3. the body, where the meter reads one: read within the account's
//     share of the node's body memory (429) and the node's budget (503
//     server_overloaded), taken as bytes arrive, and within the body
//     timeout (408 request_timeout); parsed strictly once (400), and the
//     parse handed to the handlers after this one; a body refused spends
//     one request of the key's rate;
//  4. after the body, one limits.Admit (one Redis round trip): the key's
//     request rate (429), for a stream ("stream": true) one of its
//     concurrent-stream slots (429), and on a route that can cost money
//     a hold of its estimated cost (billing.HoldEstimate) against the
//     available balance (402). A request with no body to read is
//     admitted at step 2 instead, by its rate and the balance check.
//
// The checks of one Admit are one atomic step: a refusal spends nothing
// of the others. What a request refused at each step has spent is in
// docs/billing.md. The hold is settled by whoever records the request's
// charge and released when the handlers after this one return. Every
// response whose rate was checked carries OpenAI's
// x-ratelimit-limit-requests, x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests headers. A stream's slot is held until the
// handlers after this one return, whether the stream ended, the client
// went away, the upstream failed or a handler panicked.
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

// ServeHTTP implements caddyhttp.MiddlewareHandler: the admission step,
// whose refusals become the client's error.
func (h *Limits) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	st := stateOf(r.Context())
	p, ok := h.principalIn(w, r, st)
	if !ok {
		return nil
	}
	ad, err := h.admit(w, r, st, *p)
	if err != nil {
		writeRefusal(w, r, err)
		return nil
	}
	// The charge settles the hold first (the meter, the chat handler);
	// this frees it and the slot whatever happened, a panic included.
	defer ad.release()
	return next.ServeHTTP(w, r)
}

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
