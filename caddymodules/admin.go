package caddymodules

import (
	"errors"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/configcheck"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/telemetry"
)

func init() {
	registerHandler[Admin](httpcaddyfile.After, "reverse_proxy")
}

// Admin serves the admin API (docs/admin.md) under /admin/: accounts,
// keys, top-ups, ledgers, usage, files and the audit log, for bearers of
// a JWT. It answers every request it sees and calls no next handler; it
// needs no API key, so keep it out of switchyard_auth's matcher.
type Admin struct {
	// How tokens are verified: jwt_secret, jwks_url, issuer, audience,
	// account_claim, role_claim (node.AdminVerifier has their defaults).
	node.AdminVerifier

	// Requests that tokens with one sub claim may make per
	// rate_limit_period; past it, 429 rate_limit_exceeded with
	// Retry-After. Counted on the app's limiter (in Redis across nodes
	// when there is one) with bursts of up to the limit. 0 turns the limit
	// off. Default: 120.
	RateLimit *int `json:"rate_limit,omitempty"`
	// Period of rate_limit. Default: 1m.
	RateLimitPeriod caddy.Duration `json:"rate_limit_period,omitempty"`

	// Requests one client address may make per address_rate_limit_period,
	// counted before the token is checked, whatever it is. The address is
	// Caddy's client IP (forwarded only from trusted_proxies), IPv6 per
	// /64. 0 turns the limit off. Default: 300.
	AddressRateLimit *int `json:"address_rate_limit,omitempty"`
	// Period of address_rate_limit. Default: 1m.
	AddressRateLimitPeriod caddy.Duration `json:"address_rate_limit_period,omitempty"`

	// How often a flood of refused requests is written: of the refusals
	// alike (one token subject, or one address without a genuine token;
	// the same action and outcome), the first 10 of each interval are
	// written one by one to the audit log and the server log, and one
	// summary entry counts the rest. Default: 1m.
	RefusalLogInterval caddy.Duration `json:"refusal_log_interval,omitempty"`

	// Payment providers through which account owners add funds
	// (docs/payments.md); their webhooks are served under
	// /admin/payments/. Default: from the environment
	// ($SWITCHYARD_STRIPE_SECRET_KEY with $SWITCHYARD_STRIPE_WEBHOOK_SECRET,
	// $SWITCHYARD_PAYMENTS_WEBHOOK_SECRET); with none, only operators
	// credit balances.
	Payments *payments.Settings `json:"payments,omitempty"`

	// How balance alerts are delivered (docs/accounts.md). Default: see
	// alerts.Settings; webhooks only, unless an SMTP server is set.
	Alerts *alerts.Settings `json:"alerts,omitempty"`

	handler        *admin.Handler
	stopDispatcher func()   // nil: not running
	stopAutoTopUp  func()   // nil: not running
	guard          *ipGuard // nil: no limit on refused tokens per address
	disabled       bool     // no way to verify tokens: every request gets 503
	metrics        *telemetry.Metrics
}

// CaddyModule returns the Caddy module information.
func (Admin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_admin",
		New: func() caddy.Module { return new(Admin) },
	}
}

// Validate implements caddy.Validator.
func (h *Admin) Validate() error { return h.AdminVerifier.Validate() }

// Provision implements caddy.Provisioner.
func (h *Admin) Provision(ctx caddy.Context) error {
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.metrics = app.metrics
	cfg, err := app.settings.VerifierConfig(h.AdminVerifier, expander(caddy.NewReplacer()))
	if errors.Is(err, node.ErrAdminUnconfigured) {
		// A distributed deployment that has not set the admin API up
		// keeps running; the API says why it is off.
		ctx.Logger().Warn("admin API disabled: " + err.Error())
		h.disabled = true
		return nil
	}
	if err != nil {
		return err
	}
	verifier, err := admin.NewVerifier(cfg)
	if err != nil {
		return err
	}
	// Refused tokens count against the client address with refused API
	// keys, under limits' auth_failures: guessing at either costs the
	// same budget.
	if h.guard, err = app.ipGuard(); err != nil {
		return err
	}
	pay, err := paymentsService(h.Payments, app.Store(), app, ctx.Logger())
	if err != nil {
		return err
	}
	dispatcher, err := alertDispatcher(h.Alerts, app.Store(), ctx.Logger())
	if err != nil {
		return err
	}
	h.handler, err = admin.New(admin.Config{
		Payments:        pay,
		Alerts:          dispatcher,
		Store:           app.Store(),
		Hasher:          app.hasher,
		Profile:         app.Profile(),
		Verifier:        verifier,
		Files:           func() (*files.Service, error) { return app.FilesService() },
		Held:            app.Limiter(),
		ClientIP:        clientIP,
		Logger:          ctx.Logger(),
		Limiter:         app.Limiter(),
		TokenRate:       admin.RateOf(h.RateLimit, time.Duration(h.RateLimitPeriod), admin.DefaultTokenRate),
		AddressRate:     admin.RateOf(h.AddressRateLimit, time.Duration(h.AddressRateLimitPeriod), admin.DefaultAddressRate),
		AddressKey:      clientAddr,
		RefusalInterval: time.Duration(h.RefusalLogInterval),
	})
	if err != nil {
		return err
	}
	// Every node that serves the admin API sends due alerts; the store's
	// leases keep two nodes, or two configs during a reload, from sending
	// one delivery twice at once.
	h.stopDispatcher = dispatcher.Start()
	var onCommit func(func([]string)) func()
	if app.backend.ledger != nil {
		onCommit = app.backend.ledger.OnCommit
	}
	h.stopAutoTopUp = pay.StartAutoTopUp(onCommit)
	return nil
}

// Cleanup implements caddy.CleanerUpper: it writes the summaries of the
// refusals counted so far.
func (h *Admin) Cleanup() error {
	if h.stopDispatcher != nil {
		h.stopDispatcher()
	}
	if h.stopAutoTopUp != nil {
		h.stopAutoTopUp()
	}
	if h.handler == nil {
		return nil
	}
	return h.handler.Close()
}

// clientIP is the client address Caddy determined, which honours the
// server's trusted_proxies, else the connection's peer.
func clientIP(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	return r.RemoteAddr
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Admin) ServeHTTP(rw http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	w := telemetry.NewWriter(rw, r, nil)
	defer h.metrics.CountAdmin(r, w)
	if h.disabled {
		w.Header().Set("Cache-Control", "no-store")
		apierror.Write(w, apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "admin_not_configured",
			"The admin API is not configured on this gateway: "+node.ErrAdminUnconfigured.Error()+"."))
		return nil
	}
	if gw, ok := h.guard.admit(w, r); ok {
		h.handler.ServeHTTP(gw, r)
	}
	return nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_admin {
//		jwt_secret    <secret>
//		jwks_url      <url>
//		issuer        <iss>
//		audience      <aud>
//		account_claim <name>
//		role_claim    <name>
//		rate_limit         <n> [<period>] | off
//		address_rate_limit <n> [<period>] | off
//		refusal_log_interval <duration>
//		payments { ... }
//		alerts { ... }
//	}
//
// (payments and alerts: see unmarshalPayments and unmarshalAlerts).
func (h *Admin) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		return d.ArgErr()
	}
	return blockOptions(d, 0, "switchyard_admin", map[string]optionReader{
		"jwt_secret":           secretOption(&h.JWTSecret, admin.MinSecretBytes),
		"jwks_url":             checkedOption(&h.JWKSURL, configcheck.URL("https://sso.example.com/.well-known/jwks.json", "https", "http")),
		"issuer":               stringOption(&h.Issuer),
		"audience":             stringOption(&h.Audience),
		"account_claim":        stringOption(&h.AccountClaim),
		"role_claim":           stringOption(&h.RoleClaim),
		"rate_limit":           rateOption(&h.RateLimit, &h.RateLimitPeriod),
		"address_rate_limit":   rateOption(&h.AddressRateLimit, &h.AddressRateLimitPeriod),
		"refusal_log_interval": positiveDurationOption(&h.RefusalLogInterval),
		"payments":             subBlockOption(&h.Payments, unmarshalPayments),
		"alerts":               subBlockOption(&h.Alerts, unmarshalAlerts),
	})
}

// rateOption reads the arguments of an option of the form
//
//	<option> <n> [<period>] | off
//
// into n (0 for off) and period.
func rateOption(n **int, period *caddy.Duration) optionReader {
	return func(d *caddyfile.Dispenser) error {
		opt, args := d.Val(), d.RemainingArgs()
		if len(args) == 1 && args[0] == "off" {
			*n = ptr(0)
			return nil
		}
		if len(args) < 1 || len(args) > 2 {
			return d.Errf("%s: want <n> [<period>] or off", opt)
		}
		v, err := positiveInt(args[0])
		if err != nil {
			return d.Errf("%s: %v", opt, err)
		}
		*n = &v
		if len(args) == 2 {
			p, err := caddy.ParseDuration(args[1])
			if err != nil || p <= 0 {
				return d.Errf("%s: want a positive period, not %q", opt, args[1])
			}
			*period = caddy.Duration(p)
		}
		return nil
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Admin)(nil)
	_ caddy.Validator             = (*Admin)(nil)
	_ caddy.CleanerUpper          = (*Admin)(nil)
	_ caddyhttp.MiddlewareHandler = (*Admin)(nil)
	_ caddyfile.Unmarshaler       = (*Admin)(nil)
)
