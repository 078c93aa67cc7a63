package caddymodules

import (
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/telemetry"
)

func init() {
	registerHandler[Auth](httpcaddyfile.Before, "reverse_proxy")
}

// Auth requires an API key on every request it sees: the header
// "Authorization: Bearer sk-...". A missing, malformed, unknown or revoked
// key is answered with 401 invalid_api_key; a valid one lets the request
// through without its Authorization header, so the caller's key can never
// be forwarded upstream.
//
// It also gives every request two ids. The request id, for correlation,
// is X-Request-Id from the caller when it is a plain token of at most 128
// characters, a new random UUID otherwise, echoed in the response and
// sent upstream. The charge id is always the server's own UUID of the
// request: usage records and charges are keyed by it, so a caller who
// repeats an X-Request-Id is charged for every request it makes. The
// charge id is the ledger's reference of the request's charge and is
// never handed out: it stays in the server's logs and usage records.
//
// Placeholders set for later handlers and access logs:
// {switchyard.request_id}, {switchyard.charge_id}, {switchyard.account_id},
// {switchyard.account}, {switchyard.key_id} and {switchyard.key_hint}.
//
// Every request it sees, refused or not, is counted in
// switchyard_requests_total when it finishes (docs/operations.md).
type Auth struct {
	authn   *policy.Authenticator
	guard   *ipGuard // nil: no limit on failed authentications
	metrics *telemetry.Metrics
	logger  *zap.Logger
	ledger  *billing.LedgerWriter // takes the request log entries
}

// CaddyModule returns the Caddy module information.
func (Auth) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_auth",
		New: func() caddy.Module { return new(Auth) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Auth) Provision(ctx caddy.Context) error {
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.authn = app.Authenticator()
	if h.guard, err = app.ipGuard(); err != nil {
		return err
	}
	h.metrics = app.metrics
	h.logger = ctx.Logger()
	if app.backend != nil {
		h.ledger = app.backend.ledger
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Auth) ServeHTTP(rw http.ResponseWriter, r *http.Request, next caddyhttp.Handler) (err error) {
	st := stateOf(r.Context())
	id, w := st.authParts()
	w.Init(rw, r, h.metrics)
	// Counted in a defer: reverse_proxy ends a cut stream with
	// panic(http.ErrAbortHandler), and that request happened too.
	panicked := true
	defer func() { countRequest(h.metrics, st, r, w, err, panicked) }()
	// The handlers after this one see the request without the caller's
	// key in its query.
	next = scrubbingKey(r, next)
	if !h.guard.blocked(w, r) {
		err = h.serve(w, r, next, st, id)
	}
	panicked = false
	return err
}

func (h *Auth) serve(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, st *requestState, id *policy.Identity) error {
	repl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)

	id.InitEcho(r.Header, w.Header())
	repl.Map(id.Placeholder)
	st.line.Request(id.RequestID, id.ChargeID)

	p, err := h.authn.Authenticate(r.Context(), headerValue(r.Header, headerAuthorization))
	if err != nil {
		if _, ok := err.(*apierror.Error); !ok {
			h.logger.Error("authenticating request", zap.String("request_id", id.RequestID), zap.Error(err))
		} else if c := h.logger.Check(zap.DebugLevel, "authentication refused"); c != nil {
			c.Write(zap.String("request_id", id.RequestID), zap.String("reason", err.Error()))
		}
		// Nobody reads the body of a refused request: the server must
		// not wait for it before answering.
		h.guard.refuse(w, r, err)
		return nil
	}
	if err := policy.CheckKeyUse(p, clientIP(r), time.Now()); err != nil {
		h.guard.refuse(w, r, err)
		return nil
	}
	delete(r.Header, headerAuthorization)
	id.Principal, id.Authenticated = p, true
	st.line.Caller(p.AccountID, p.KeyID)
	startActivity(st, r, w, h.ledger, id.RequestID, p)
	return next.ServeHTTP(w, r)
}

// chargeID returns the server's own id of r, set by switchyard_auth
// ({switchyard.charge_id}); "" before it.
func chargeID(r *http.Request) string { return stateOf(r.Context()).chargeID() }

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_auth
func (h *Auth) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return noArgs(d, "switchyard_auth takes no arguments")
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Auth)(nil)
	_ caddyhttp.MiddlewareHandler = (*Auth)(nil)
	_ caddyfile.Unmarshaler       = (*Auth)(nil)
)
