// Package admin is the admin API: the HTTP surface under /admin/ where
// account owners and operators create and revoke keys, top up, and read
// balances, ledgers, usage, files and the audit log, authenticated with
// JWTs (docs/admin.md). It holds no business rules of its own: keys are
// issued and revoked by policy, top-ups posted by billing, files deleted
// by files, reports read from storage, the same calls the CLI makes. The
// Caddy module switchyard_admin wraps it.
package admin

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// Config is what a Handler works with.
type Config struct {
	// Store holds accounts, keys, the ledger, usage and the audit log.
	// Required.
	Store storage.Store
	// Hasher hashes new keys as the authenticator looks them up.
	// Required.
	Hasher policy.KeyHasher
	// Profile gives the key and top-up limits.
	Profile policy.Profile
	// Verifier checks tokens. Required.
	Verifier *Verifier
	// Files returns the Files API service. Nil: the files routes answer
	// 501 not_implemented.
	Files func() (*files.Service, error)
	// Payments takes account owners' money through a provider and serves
	// the providers' webhooks (/admin/payments/{stripe,generic}/webhook).
	// Nil: no provider; only operators add funds.
	Payments *payments.Service
	// Alerts delivers balance alerts; the routes ask it whether email can
	// be sent. Nil: email destinations are refused.
	Alerts *alerts.Dispatcher
	// Held reports what requests in flight hold of a balance. Nil:
	// reserved_cents is always 0.
	Held limits.HoldReporter
	// ClientIP returns the address a request came from, as the audit log
	// records it. Default: the host of r.RemoteAddr.
	ClientIP func(r *http.Request) string
	// Logger receives every audit entry too. Default: no logging.
	Logger *zap.Logger
	// Now is the clock for usage periods and for RefusalInterval.
	// Default: time.Now.
	Now func() time.Time

	// Limiter counts requests against TokenRate and AddressRate (in
	// process, or in Redis across nodes). Nil: no rate limit.
	Limiter limits.RateLimiter
	// TokenRate bounds the requests of one token subject (every token
	// with the same sub claim counts together), after the token is
	// verified. A zero Rate: no limit. The Caddy module's default is
	// DefaultTokenRate.
	TokenRate limits.Rate
	// AddressRate bounds the requests from one client address, counted
	// before the token is looked at, so that it also bounds the cost of
	// checking forged ones. A zero Rate: no limit. The Caddy module's
	// default is DefaultAddressRate.
	AddressRate limits.Rate
	// AddressKey is the address a request counts under for AddressRate.
	// Default: ClientIP.
	AddressKey func(r *http.Request) string
	// RefusalInterval is how often a flood of refused requests is
	// written: of the refusals alike (same token subject, or address for
	// requests without a genuine token; same action and outcome), the
	// first 10 of each interval are written to the audit log and the
	// server log, and one summary entry counts the others. Default (0):
	// DefaultRefusalInterval.
	RefusalInterval time.Duration
}

// Defaults of the admin API's rate limits, as the Caddy module sets
// them. The dashboard makes a handful of requests per page, so these
// leave a person clicking through it, or a script working through
// accounts, far below them, and a flood is refused long before it costs
// anything noticeable.
var (
	DefaultTokenRate   = limits.Rate{Limit: 120, Period: time.Minute}
	DefaultAddressRate = limits.Rate{Limit: 300, Period: time.Minute}
)

// Handler serves the admin API. It is safe for concurrent use. Close
// stops the goroutine that writes the summaries of refused requests.
type Handler struct {
	cfg      Config
	refusals *refusals

	startFlusher sync.Once
	stop         chan struct{}
	stopped      chan struct{}
	closeOnce    sync.Once
}

// New checks cfg and returns a Handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil || cfg.Verifier == nil {
		return nil, errors.New("admin: Store and Verifier are required")
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = remoteHost
	}
	if cfg.AddressKey == nil {
		cfg.AddressKey = cfg.ClientIP
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RefusalInterval <= 0 {
		cfg.RefusalInterval = DefaultRefusalInterval
	}
	h := &Handler{cfg: cfg, stop: make(chan struct{}), stopped: make(chan struct{})}
	h.refusals = newRefusals(cfg.RefusalInterval, cfg.Now, h.write)
	return h, nil
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// request is one admin request once its token is verified.
type request struct {
	h    *Handler
	w    http.ResponseWriter
	r    *http.Request
	who  Principal
	ctx  context.Context
	path []string // segments after /admin/
}

// ServeHTTP authenticates the request, then routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")

	// A payment provider's webhook carries no token: its signature is
	// its authentication, checked by the provider's handler. It is not
	// counted against the address either, since a provider delivers a
	// busy gateway's events from few addresses.
	if h.webhook(w, r) {
		return
	}
	addr := h.cfg.AddressKey(r)
	if !h.allow(w, r, addressLimit, addr, Principal{}) {
		return
	}
	token, ok := bearer(r)
	if !ok {
		hd.Set("WWW-Authenticate", `Bearer realm="switchyard-admin"`)
		apierror.Write(w, invalidToken("An admin API request needs the header Authorization: Bearer <JWT>."))
		return
	}
	who, err := h.cfg.Verifier.Verify(r.Context(), token)
	if err != nil {
		var te *TokenError
		if !errors.As(err, &te) {
			te = &TokenError{Reason: "the token is invalid"}
		}
		if te.SignatureValid {
			h.audit(r, storage.AuditEntry{Subject: te.Subject, Action: "auth", Outcome: "invalid_token", Detail: te.Reason})
		} else {
			// Anyone can send any number of these: logged, not stored.
			h.refused(r, storage.AuditEntry{Action: "auth", Outcome: "invalid_token", Detail: te.Reason}, false)
		}
		hd.Set("WWW-Authenticate", `Bearer realm="switchyard-admin", error="invalid_token"`)
		apierror.Write(w, invalidToken("The token was refused: "+clip.Ellipsis(te.Reason, 200)+"."))
		return
	}
	if !h.allow(w, r, tokenLimit, who.Subject, who) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/admin/")
	if !ok {
		notFound(w)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	req := &request{h: h, w: w, r: r, who: who, ctx: r.Context(), path: strings.Split(rest, "/")}
	req.route()
}

func notFound(w http.ResponseWriter) {
	apierror.Write(w, apierror.NotFound("No such admin API route."))
}

func methodNotAllowed(w http.ResponseWriter, allow ...string) {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	apierror.Write(w, apierror.New(http.StatusMethodNotAllowed, apierror.TypeInvalidRequest, "method_not_allowed",
		"Method not allowed. Allowed: "+strings.Join(allow, ", ")+"."))
}

// route dispatches on the path segments and the method.
func (q *request) route() {
	p, m := q.path, q.r.Method
	on := func(routes map[string]func()) {
		if f, ok := routes[m]; ok {
			f()
			return
		}
		if f, ok := routes[http.MethodGet]; ok && m == http.MethodHead {
			f()
			return
		}
		allow := make([]string, 0, len(routes))
		for _, k := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			if _, ok := routes[k]; ok {
				allow = append(allow, k)
			}
		}
		methodNotAllowed(q.w, allow...)
	}
	switch {
	case len(p) == 1 && p[0] == "me":
		on(map[string]func(){http.MethodGet: q.me})
	case len(p) == 1 && p[0] == "audit":
		on(map[string]func(){http.MethodGet: q.auditLog})
	case len(p) == 1 && p[0] == "accounts":
		on(map[string]func(){http.MethodGet: q.listAccounts, http.MethodPost: q.createAccount})
	case len(p) >= 2 && p[0] == "accounts" && p[1] != "":
		q.accountRoute(p[1], p[2:], on)
	default:
		notFound(q.w)
	}
}

func (q *request) accountRoute(name string, p []string, on func(map[string]func())) {
	with := func(action string, f func(storage.Account)) func() {
		return func() {
			acct, err := q.account(name, action)
			if err != nil {
				q.fail(err)
				return
			}
			f(acct)
		}
	}
	switch {
	case len(p) == 0:
		on(map[string]func(){http.MethodGet: with("account.read", q.getAccount)})
	case len(p) == 1 && p[0] == "keys":
		on(map[string]func(){http.MethodGet: with("key.list", q.listKeys), http.MethodPost: with("key.create", q.createKey)})
	case len(p) == 2 && p[0] == "keys" && p[1] != "":
		on(map[string]func(){http.MethodDelete: with("key.revoke", func(a storage.Account) { q.revokeKey(a, p[1]) })})
	case len(p) == 3 && p[0] == "keys" && p[1] != "" && p[2] == "controls":
		on(map[string]func(){http.MethodPut: with("key.controls", func(a storage.Account) { q.setKeyControls(a, p[1]) })})
	case len(p) == 1 && p[0] == "topups":
		on(map[string]func(){http.MethodPost: with("topup", func(a storage.Account) {
			if q.mayTopUp(a.Name) {
				q.topUp(a)
			}
		})})
	case len(p) == 1 && (p[0] == "disable" || p[0] == "enable"):
		disable := p[0] == "disable"
		on(map[string]func(){http.MethodPost: func() {
			if q.operatorOnly("account." + p[0]) {
				with("account."+p[0], func(a storage.Account) { q.setDisabled(a, disable) })()
			}
		}})
	case len(p) == 1 && p[0] == "checkout":
		on(map[string]func(){http.MethodPost: with("checkout", q.checkout)})
	case len(p) == 1 && p[0] == "receipts":
		on(map[string]func(){http.MethodGet: with("receipts.read", q.receipts)})
	case len(p) == 1 && p[0] == "alerts":
		on(map[string]func(){http.MethodGet: with("alerts.read", q.getAlerts), http.MethodPut: with("alerts.update", q.putAlerts)})
	case len(p) == 1 && p[0] == "autotopup":
		on(map[string]func(){http.MethodGet: with("autotopup.read", q.getAutoTopUp), http.MethodPut: with("autotopup.update", q.putAutoTopUp)})
	case len(p) == 2 && p[0] == "alerts" && p[1] == "deliveries":
		on(map[string]func(){http.MethodGet: with("alerts.read", q.alertDeliveries)})
	case len(p) == 1 && p[0] == "ledger":
		on(map[string]func(){http.MethodGet: with("ledger.read", q.ledger)})
	case len(p) == 1 && p[0] == "activity":
		on(map[string]func(){http.MethodGet: with("activity.read", q.activity)})
	case len(p) == 1 && p[0] == "usage":
		on(map[string]func(){http.MethodGet: with("usage.read", q.usage)})
	case len(p) == 1 && p[0] == "files":
		on(map[string]func(){http.MethodGet: with("file.list", q.listFiles)})
	case len(p) == 2 && p[0] == "files" && p[1] != "":
		on(map[string]func(){http.MethodDelete: with("file.delete", func(a storage.Account) { q.deleteFile(a, p[1]) })})
	case len(p) == 3 && p[0] == "files" && p[1] != "" && p[2] == "content":
		on(map[string]func(){http.MethodGet: with("file.read", func(a storage.Account) { q.fileContent(a, p[1]) })})
	default:
		notFound(q.w)
	}
}

// errAccountNotFound answers both a missing account and one the token may
// not manage, so that a token learns nothing about others' accounts.
func errAccountNotFound(name string) *apierror.Error {
	return apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "account_not_found",
		"No account named "+quote(name)+".")
}

// account resolves the account named in the path, if the token may
// manage it. A refusal is audited: the token was genuine.
func (q *request) account(name, action string) (storage.Account, error) {
	if !q.who.MayManage(name) {
		q.audit(action, name, "", "account_not_found", "the token may not manage this account")
		return storage.Account{}, errAccountNotFound(name)
	}
	acct, err := q.h.cfg.Store.AccountByName(q.ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		if isMutation(q.r.Method) {
			q.audit(action, name, "", "account_not_found", "")
		}
		return storage.Account{}, errAccountNotFound(name)
	}
	return acct, err
}

func isMutation(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// operatorOnly refuses non-operators with 403 permission_denied.
func (q *request) operatorOnly(action string) bool {
	if q.who.Operator {
		return true
	}
	q.audit(action, "", "", "permission_denied", "")
	q.fail(apierror.New(http.StatusForbidden, apierror.TypePermission, "permission_denied",
		"Only an operator token may do this."))
	return false
}

// mayTopUp refuses, with 403 permission_denied, a token that may not
// credit the balance of the account named.
func (q *request) mayTopUp(account string) bool {
	if q.who.MayTopUp() {
		return true
	}
	q.audit("topup", account, "", "permission_denied", "")
	msg := "An account's token cannot add funds to a balance: this gateway takes no payments, " +
		"so top-ups are made by an operator (an operator token, or switchyard accounts topup)."
	if q.h.cfg.Payments.CheckoutEnabled() {
		msg = "An account's token adds funds through the payment page (POST .../checkout), " +
			"credited once the payment provider confirms the payment; direct top-ups are for operators."
	}
	q.fail(apierror.New(http.StatusForbidden, apierror.TypePermission, "permission_denied", msg))
	return false
}

// fail answers with err's envelope; errors that are not client errors
// are logged and answered as internal_error.
func (q *request) fail(err error) {
	var ae *apierror.Error
	if !errors.As(err, &ae) {
		q.h.cfg.Logger.Error("admin request failed", zap.String("method", clip.Ellipsis(q.r.Method, 16)),
			zap.String("path", clip.Ellipsis(q.r.URL.Path, maxLoggedPath)), zap.Error(err))
	}
	apierror.Write(q.w, err)
}

// outcome is the audit outcome of err: "ok", or the code answered.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return apierror.From(err).Code
}

func quote(s string) string {
	s = clip.Ellipsis(s, 80)
	return `"` + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, s) + `"`
}
