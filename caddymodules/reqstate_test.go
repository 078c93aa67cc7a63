package caddymodules

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/policy"
)

// A request's state is made once and found again by every handler, with
// its access log line put into Caddy's extra log fields once; a second
// switchyard_auth on the same request gets an identity and a writer of
// its own, so that the handlers after the first keep seeing the first's.
func TestRequestStateIsOneARequest(t *testing.T) {
	vars := map[string]any{}
	extra := new(caddyhttp.ExtraLogFields)
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, vars)
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, extra)
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil).WithContext(ctx)

	st := stateOf(ctx)
	if stateOf(ctx) != st || lineFor(ctx) != &st.line {
		t.Fatal("a request's handlers got different states")
	}
	if len(vars) != 1 {
		t.Errorf("the state took %d request variables, want 1: %v", len(vars), vars)
	}
	if chargeID(r) != "" {
		t.Errorf("a charge id before switchyard_auth: %q", chargeID(r))
	}

	id, w := st.authParts()
	id.Init(r.Header)
	if id != &st.auth.v.id || w != &st.auth.v.w {
		t.Error("the first switchyard_auth did not get the state's own identity and writer")
	}
	if chargeID(r) != id.ChargeID || id.ChargeID == "" {
		t.Errorf("chargeID = %q, want the identity's %q", chargeID(r), id.ChargeID)
	}
	id2, w2 := st.authParts()
	if id2 == id || w2 == w {
		t.Fatal("a second switchyard_auth got the first's identity or writer")
	}
	id2.Init(r.Header)
	if chargeID(r) != id.ChargeID {
		t.Errorf("after a second switchyard_auth, chargeID = %q, want the first's %q", chargeID(r), id.ChargeID)
	}

	// Outside a request Caddy serves, a state nothing keeps.
	bare := context.Background()
	if stateOf(bare) == stateOf(bare) {
		t.Error("a state kept without request variables")
	}
}

// The first switchyard_proxy on a request takes the state's header
// filter and idle watch; one after it gets its own, so that the first's,
// which may still be answering, are left alone.
func TestRequestStateOwnValues(t *testing.T) {
	var st requestState
	v1 := st.forV1()
	if st.forV1() != v1 {
		t.Fatal("the /v1 handlers of a request got different v1States")
	}
	hf, iw := v1.headers.take(), v1.watch.take()
	if hf != &v1.headers.v || iw != &v1.watch.v {
		t.Error("the first switchyard_proxy did not get the state's own filter and watch")
	}
	if v1.headers.take() == hf || v1.watch.take() == iw {
		t.Error("a second switchyard_proxy got the first's filter or watch")
	}
}

// A request no /v1 handler saw carries no v1State: reading the model a
// /v1 body asked for makes none.
func TestRequestStateWithoutV1(t *testing.T) {
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	if m := stateOf(ctx).v1Model(); m != "" {
		t.Errorf("a /v1 model %q on a request without a /v1 parse", m)
	}
	if stateOf(ctx).v1 != nil {
		t.Error("reading the /v1 model made a v1State")
	}
	v1 := stateOf(ctx).forV1()
	v1.req.Model, v1.parsed = "gpt-test", true
	if m := stateOf(ctx).v1Model(); m != "gpt-test" {
		t.Errorf("v1Model = %q, want the parse's", m)
	}
}

// A /v1 request's rate-limit headers keep their values in its v1State,
// whose size class had the room to spare; a request without one, in a
// room of their own.
func TestRateHeadersInTheV1State(t *testing.T) {
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	if room := stateOf(ctx).rateHeaderRoom(); room != nil {
		t.Error("a room for the rate-limit headers on a request without a v1State")
	}
	v1 := stateOf(ctx).forV1()
	if room := stateOf(ctx).rateHeaderRoom(); room != &v1.rateHeaders {
		t.Error("a /v1 request's rate-limit headers are not kept in its v1State")
	}
	// 1,536 bytes is the allocator's size class the v1State was in
	// before the room: growing past it costs every /v1 request.
	if size := unsafe.Sizeof(v1State{}); size > 1536 {
		t.Errorf("a v1State is %d bytes, past the 1,536-byte size class", size)
	}
}

// The caller is the first switchyard_auth's, once it authenticated the
// request; before, or outside a request Caddy serves, the one a context
// carries.
func TestPrincipalOf(t *testing.T) {
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	if _, ok := principalOf(ctx); ok {
		t.Error("a caller before switchyard_auth")
	}
	st := stateOf(ctx)
	id, _ := st.authParts()
	id.Principal = policy.Principal{KeyID: "key_1"}
	if _, ok := principalOf(ctx); ok {
		t.Error("a caller before the request was authenticated")
	}
	id.Authenticated = true
	if p, ok := principalOf(ctx); !ok || p.KeyID != "key_1" {
		t.Errorf("principalOf = %+v, %v; want the identity's", p, ok)
	}
	if p, ok := principalOf(policy.WithPrincipal(context.Background(), policy.Principal{KeyID: "key_2"})); !ok || p.KeyID != "key_2" {
		t.Errorf("principalOf a context's principal = %+v, %v", p, ok)
	}
}

// A body label the admission step accepted is not checked again while
// it is the same, and is checked again, as billing.CheckBody would,
// once a handler in between changed it or for another meter.
func TestCheckedBodyLabel(t *testing.T) {
	req := func() *http.Request {
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
		r.Header.Set("Content-Type", "application/json")
		return r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{}))
	}
	r := req()
	st := stateOf(r.Context())
	if err := st.checkedBody(billing.V1JSON, r); err != nil {
		t.Fatalf("a JSON body refused before any note: %v", err)
	}
	st.noteChecked(billing.V1JSON, r.Header)
	if err := st.checkedBody(billing.V1JSON, r); err != nil {
		t.Fatalf("the label accepted is refused: %v", err)
	}
	for name, change := range map[string]func(h http.Header){
		"another type":     func(h http.Header) { h.Set("Content-Type", "text/plain") },
		"the type changed": func(h http.Header) { h["Content-Type"][0] = "text/plain" },
		"a second type":    func(h http.Header) { h.Add("Content-Type", "application/json") },
		"an encoding":      func(h http.Header) { h.Set("Content-Encoding", "gzip") },
	} {
		r := req()
		st := stateOf(r.Context())
		st.noteChecked(billing.V1JSON, r.Header)
		change(r.Header)
		if st.checkedBody(billing.V1JSON, r) == nil {
			t.Errorf("%s: the changed label passes", name)
		}
	}
	// For another meter the check is its own.
	r = req()
	st = stateOf(r.Context())
	st.noteChecked(billing.V1JSON, r.Header)
	if got, want := st.checkedBody(billing.NoBody, r), billing.CheckBody(billing.NoBody, r.Method, r.URL.Path, r.Header, true); (got == nil) != (want == nil) {
		t.Errorf("NoBody after a V1JSON note: %v, CheckBody %v", got, want)
	}
}

// The request's state stays in the allocator's 1,024-byte size class,
// which every open /v3 stream keeps: the checked label took room it had
// to spare.
func TestRequestStateSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(requestState{}); size > 1024 {
		t.Errorf("requestState is %d bytes, past the 1,024-byte size class", size)
	}
}
