package caddymodules

import (
	"context"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/body"
	"github.com/switchyardhq/switchyard/internal/idle"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/policy/passthrough"
	"github.com/switchyardhq/switchyard/telemetry"
)

// requestState is what Switchyard's handlers leave a request for the
// handlers after them and for its access log line, in one allocation
// and one of Caddy's request variables. A variable each would box most
// of them, and Caddy's variables, of which the server sets four on a
// proxied request itself, would outgrow the eight a map keeps without
// growing into a table. What only the /v1 handlers use is in a value of
// its own (v1State), which a /v3 stream, held open for minutes, does
// not carry.
type requestState struct {
	line     telemetry.LogLine // the request's fields of its access log line
	activity billing.Activity  // its request log entry, started once authenticated
	hold     *limits.Hold      // its balance hold, for whoever records its charge

	// body is the request's body once a handler has read it
	// (bodyReader), so that it is read from the client once; nil before.
	body     []byte
	readBody own[body.ReadBody] // what r.Body is once body is read

	// switchyard_auth's identity of the request and its writer of the
	// response, the first switchyard_auth's on the request (authParts).
	auth own[authResult]

	// v1 is made by the first /v1 handler to need it (forV1); nil on a
	// request no /v1 handler saw.
	v1 *v1State

	// chatModel is the model a /v3 chat body asked for, kept for the
	// metrics once the chat handler has let go of the body's parse.
	chatModel string

	// checked is the body label the admission step accepted
	// (checkedBody), for the handler after it that checks it again.
	checked checkedLabel
}

// checkedLabel is a body label billing.CheckBody accepted for a meter:
// the request's one Content-Type, without Content-Encoding.
type checkedLabel struct {
	meter       billing.BodyMeter
	contentType string
}

// noteChecked notes that the body label of a request with a body, whose
// headers are h, passed billing.CheckBody for m.
func (s *requestState) noteChecked(m billing.BodyMeter, h http.Header) {
	if ct := h["Content-Type"]; len(ct) == 1 && len(h["Content-Encoding"]) == 0 {
		s.checked = checkedLabel{m, ct[0]}
	}
}

// checkedBody is billing.CheckBody of the request whose state s is: nil
// without a check when its label is still the one the admission step
// accepted for m, the same Content-Type and no Content-Encoding, which
// CheckBody would accept again (it reads nothing else of a request with
// a body, and nothing of one without). The check reads both headers by
// names it canonicalises, and the media type with its parameters: about
// two thousand instructions a request, spent again by the handler.
func (s *requestState) checkedBody(m billing.BodyMeter, r *http.Request) *apierror.Error {
	h := r.Header
	if c := s.checked; c.contentType != "" && c.meter == m && len(h["Content-Encoding"]) == 0 {
		if ct := h["Content-Type"]; len(ct) == 1 && ct[0] == c.contentType {
			return nil
		}
	}
	return billing.CheckBody(m, r.Method, r.URL.Path, h, body.HasBody(r))
}

// v1State is what the /v1 handlers (the admission step on a /v1 body,
// switchyard_meter, switchyard_proxy) leave each other. The meter's
// exchange is in it, where it would be an allocation of its own: a /v1
// request that carries a body makes as many objects as when all of this
// was in its requestState.
type v1State struct {
	// req is the parse of a /v1 body (billing.ParseV1), for the meter
	// and the proxy, once parsed.
	req    billing.V1Request
	parsed bool

	// metered is set on a request whose body switchyard_meter took
	// charge of, for switchyard_proxy, which passes no body that was not.
	metered bool

	// switchyard_meter's exchange, the first switchyard_meter's on the
	// request; kept after the answer until the ledger writer has
	// committed its charge (meteredExchange.charge).
	exchange own[meteredExchange]

	// switchyard_proxy's filter of the answer's headers and idle watch
	// on it, the first switchyard_proxy's on the request.
	headers own[passthrough.HeaderFilter]
	watch   own[idle.Writer]

	// rateHeaders holds the values of the admission's rate-limit
	// headers (rateHeaderRoom), in the 64 bytes the state's size class
	// had to spare.
	rateHeaders limits.HeaderRoom
}

// forV1 is s's v1State, made on first use.
func (s *requestState) forV1() *v1State {
	if s.v1 == nil {
		s.v1 = new(v1State)
	}
	return s.v1
}

// rateHeaderRoom is where the admission's rate-limit headers of s's
// request keep their values (limits.SetHeadersIn): its v1State's room
// when a /v1 handler made one, else nil, for a room of their own.
func (s *requestState) rateHeaderRoom() *limits.HeaderRoom {
	if v1 := s.v1; v1 != nil {
		return &v1.rateHeaders
	}
	return nil
}

// v1Model is the model the request's /v1 body asked for, once parsed;
// "" before, and on a request no /v1 handler saw (which it makes no
// v1State for).
func (s *requestState) v1Model() string {
	if v1 := s.v1; v1 != nil && v1.parsed {
		return v1.req.Model
	}
	return ""
}

// own is a value of the request's state that the first handler to ask
// for it takes; a handler after it on the same request, which may run
// while the first still uses its own, gets a new one.
type own[T any] struct {
	v    T
	used bool
}

func (o *own[T]) take() *T {
	if o.used {
		return new(T)
	}
	o.used = true
	return &o.v
}

// authResult is what switchyard_auth fills in for a request.
type authResult struct {
	id policy.Identity
	w  telemetry.Writer
}

// authParts are the identity and writer switchyard_auth fills in for a
// request: the state's own, or for a second switchyard_auth on the same
// request, whose handlers after it still see the first's, new ones.
func (s *requestState) authParts() (*policy.Identity, *telemetry.Writer) {
	a := s.auth.take()
	return &a.id, &a.w
}

// principalOf is the caller switchyard_auth authenticated on ctx's
// request, which the request's state holds (the first switchyard_auth's
// identity), else the principal ctx carries (policy.PrincipalFrom), as
// a request made outside switchyard_auth does. switchyard_auth leaves
// it in the state rather than in a context of its own, which would copy
// the request.
func principalOf(ctx context.Context) (policy.Principal, bool) {
	if vars, ok := ctx.Value(caddyhttp.VarsCtxKey).(map[string]any); ok {
		if s, ok := vars[stateVar].(*requestState); ok {
			p, ok := s.principal(ctx)
			return *p, ok
		}
	}
	return policy.PrincipalFrom(ctx)
}

// principal is principalOf for a handler that has the state s of ctx's
// request at hand: each look-up of the state walks the request's
// context, and a /v1 request's handlers would make a score of them. It
// is the identity's own principal, not a copy of its 200 bytes: the
// handlers after switchyard_auth only read it.
func (s *requestState) principal(ctx context.Context) (*policy.Principal, bool) {
	if s.auth.used && s.auth.v.id.Authenticated {
		return &s.auth.v.id.Principal, true
	}
	p, ok := policy.PrincipalFrom(ctx)
	return &p, ok
}

// chargeID is the server's own id of s's request, set by
// switchyard_auth ({switchyard.charge_id}); "" before it.
func (s *requestState) chargeID() string {
	if s.auth.used {
		return s.auth.v.id.ChargeID
	}
	return ""
}

// stateVar is the request variable that holds its *requestState.
const stateVar = "switchyard.state"

// stateOf is the state of ctx's request, made on first use. Its line is
// put into Caddy's extra log fields then, as one inline field filled in
// place after (each ExtraLogFields.Set clears a sync.Map). Outside a
// request Caddy serves, it is a state of its own that nothing reads.
func stateOf(ctx context.Context) *requestState {
	vars, ok := ctx.Value(caddyhttp.VarsCtxKey).(map[string]any)
	if !ok {
		return new(requestState)
	}
	if s, ok := vars[stateVar].(*requestState); ok {
		return s
	}
	s := new(requestState)
	vars[stateVar] = s
	if extra, ok := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		extra.Set(zap.Inline(&s.line))
	}
	return s
}
