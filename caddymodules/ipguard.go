package caddymodules

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/policy/limits"
)

// ipGuard turns away client addresses that keep failing authentication
// before their requests cost a key lookup (limits.AuthFailures). The
// address is Caddy's client IP, which honours the server's
// trusted_proxies; IPv6 addresses count per /64, the block one host
// usually gets. Failures are counted on the app's limiter, so in Redis
// across nodes when there is one, and survive reloads.
type ipGuard struct {
	failures *limits.AuthFailures
	warn     func(error) // logs a failure that could not be counted
}

// ipGuard returns the app's guard (lazyGuard), or nil when limits turn
// it off.
func (a *App) ipGuard() (*ipGuard, error) {
	a.guard.once.Do(func() { a.guard.guard, a.guard.err = newIPGuard(a, a.logger) })
	return a.guard.guard, a.guard.err
}

// newIPGuard returns the guard app's limits configure, or nil when it is
// turned off.
func newIPGuard(app *App, logger *zap.Logger) (*ipGuard, error) {
	n, period := app.Limits.AuthFailureLimit()
	if n == 0 {
		return nil, nil
	}
	f, err := limits.NewAuthFailures(limits.AuthFailuresConfig{
		Limiter: app.Limiter(),
		Rate:    limits.Rate{Limit: n, Period: period, Rolling: true},
	})
	if err != nil {
		return nil, err
	}
	return &ipGuard{failures: f, warn: func(err error) { logger.Warn("counting a failed authentication", zap.Error(err)) }}, nil
}

// admit runs before r is authenticated (switchyard_auth, the admin API):
// a request from a blocked client address is answered 429
// rate_limit_exceeded at once (false). Else it returns the writer to
// authenticate with, on which a refusal of the authentication (401
// before any principal is set) counts against the address; the one that
// goes past the limit is answered 429 instead.
func (g *ipGuard) admit(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, bool) {
	if g == nil {
		return w, true
	}
	if g.blocked(w, r) {
		return nil, false
	}
	return limits.NewFailureWriter(r.Context(), w, g.failures, clientAddr(r),
		func() bool { return !authenticated(r) }, g.warn), true
}

// blocked answers 429 to a request from a client address that keeps
// failing authentication, before its key costs a look-up.
func (g *ipGuard) blocked(w http.ResponseWriter, r *http.Request) bool {
	if g == nil {
		return false
	}
	wait, blocked := g.failures.Blocked(clientAddr(r))
	if blocked {
		writeRefusal(w, r, limits.AuthFailuresError(g.failures, wait))
	}
	return blocked
}

// refuse answers a request whose authentication failed with err. A 401
// counts against the client's address, and the one that goes past its
// limit is answered 429 instead. switchyard_auth makes the writer that
// counts it here, for the refusal alone, where admit's wraps every
// request: two allocations and a writer more under the handlers after it.
func (g *ipGuard) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if g != nil {
		w = limits.NewFailureWriter(r.Context(), w, g.failures, clientAddr(r), refusedHere, g.warn)
	}
	writeRefusal(w, r, err)
}

// refusedHere tells refuse's writer that a 401 is the authentication's:
// nothing else writes to it.
func refusedHere() bool { return true }

// clientAddr is the address failures are counted for: Caddy's client IP
// (the remote address, or the forwarded one from a trusted proxy), with
// IPv6 cut to its /64 (limits.ClientAddr).
func clientAddr(r *http.Request) string {
	ip, _ := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string)
	return limits.ClientAddr(ip, r.RemoteAddr)
}

// authenticated reports whether r's caller is authenticated: the
// refusal of switchyard_auth is the only 401 written before
// switchyard.key_id is set.
func authenticated(r *http.Request) bool {
	repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if !ok {
		return false
	}
	id, _ := repl.GetString("switchyard.key_id")
	return id != ""
}
