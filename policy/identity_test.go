package policy

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

func TestNewIdentity(t *testing.T) {
	h := http.Header{"X-Request-Id": {"bad id with spaces"}}
	id := NewIdentity(h)
	if id.RequestID == "bad id with spaces" || h.Get("X-Request-Id") != id.RequestID || !ValidRequestID(id.RequestID) {
		t.Errorf("request id %q, header %q: want a new valid id in both", id.RequestID, h.Get("X-Request-Id"))
	}
	if id.ChargeID == "" || id.ChargeID == id.RequestID {
		t.Errorf("charge id %q", id.ChargeID)
	}
	h = http.Header{"X-Request-Id": {"client-42"}}
	if id := NewIdentity(h); id.RequestID != "client-42" {
		t.Errorf("a valid client id was replaced by %q", id.RequestID)
	}
}

// InitEcho gives the answer the request's id, the client's or a new one,
// and ids in the text form of uuid.UUID.String, with headers of their own.
func TestIdentityInitEcho(t *testing.T) {
	var id Identity
	h, echo := http.Header{}, http.Header{"X-Request-Id": {"stale"}}
	id.InitEcho(h, echo)
	if !ValidRequestID(id.RequestID) || h.Get("X-Request-Id") != id.RequestID || echo.Get("X-Request-Id") != id.RequestID {
		t.Errorf("request id %q, request header %q, answer's %q: want a new valid id in all",
			id.RequestID, h.Get("X-Request-Id"), echo.Get("X-Request-Id"))
	}
	for _, s := range []string{id.RequestID, id.ChargeID} {
		if u, err := uuid.Parse(s); err != nil || u.String() != s {
			t.Errorf("id %q is not a UUID in its text form (%v)", s, err)
		}
	}
	if u := uuid.MustParse(id.ChargeID); u.Version() != 7 || id.ChargeID == id.RequestID {
		t.Errorf("charge id %q: want a UUIDv7 of its own", id.ChargeID)
	}
	h.Add("X-Request-Id", "more")
	echo.Set("X-Request-Id", "other")
	if h.Values("X-Request-Id")[0] != id.RequestID || len(echo.Values("X-Request-Id")) != 1 {
		t.Errorf("the two headers share their values: %v, %v", h, echo)
	}

	h, echo = http.Header{"X-Request-Id": {"client-42"}}, http.Header{}
	id.InitEcho(h, echo)
	if id.RequestID != "client-42" || echo.Get("X-Request-Id") != "client-42" || id.ChargeID == "" {
		t.Errorf("a valid client id: identity %+v, answer's header %q", id, echo.Get("X-Request-Id"))
	}
}

// An identity kept in a value of the caller's costs one allocation, its
// two ids in one string: the headers' values live in the identity.
func TestIdentityInitEchoAllocatesTheIdsAlone(t *testing.T) {
	var id Identity
	h, echo := http.Header{}, http.Header{}
	id.InitEcho(h, echo)
	if n := testing.AllocsPerRun(100, func() { id.InitEcho(h, echo) }); n != 1 && !testenv.RaceEnabled {
		t.Errorf("%v allocations, want 1", n)
	}
}

func TestIdentityPlaceholder(t *testing.T) {
	id := &Identity{RequestID: "req", ChargeID: "chg", Principal: Principal{AccountID: "acct_1", AccountName: "acme", KeyID: "key_1", KeyHint: "sk-…abcd"}}
	if v, ok := id.Placeholder("switchyard.request_id"); !ok || v != "req" {
		t.Errorf("request_id = %v, %v", v, ok)
	}
	if _, ok := id.Placeholder("switchyard.account_id"); ok {
		t.Error("the account is known before authentication")
	}
	id.Authenticated = true
	for key, want := range map[string]string{"switchyard.charge_id": "chg", "switchyard.account_id": "acct_1",
		"switchyard.account": "acme", "switchyard.key_id": "key_1", "switchyard.key_hint": "sk-…abcd"} {
		if v, ok := id.Placeholder(key); !ok || v != want {
			t.Errorf("%s = %v, %v; want %q", key, v, ok, want)
		}
	}
	if _, ok := id.Placeholder("switchyard.other"); ok {
		t.Error("an unknown placeholder has a value")
	}
}

// A context carrying an identity carries its principal only once the
// identity is authenticated, as one carrying the principal itself would.
func TestPrincipalFromIdentity(t *testing.T) {
	id := NewIdentity(http.Header{})
	ctx := WithIdentity(context.Background(), id)
	if _, ok := PrincipalFrom(ctx); ok {
		t.Error("a principal before authentication")
	}
	id.Principal, id.Authenticated = Principal{KeyID: "key_1", AccountID: "acct_1"}, true
	if p, ok := PrincipalFrom(ctx); !ok || p.KeyID != "key_1" || p.AccountID != "acct_1" {
		t.Errorf("PrincipalFrom = %+v, %v; want the identity's principal", p, ok)
	}
	if p, ok := PrincipalFrom(WithPrincipal(context.Background(), Principal{KeyID: "key_2"})); !ok || p.KeyID != "key_2" {
		t.Errorf("PrincipalFrom(WithPrincipal) = %+v, %v", p, ok)
	}
	if _, ok := PrincipalFrom(context.Background()); ok {
		t.Error("a principal in a bare context")
	}
}

// BenchmarkInitEcho is a request's ids, made anew for a request without
// an X-Request-Id of its own, with their headers.
func BenchmarkInitEcho(b *testing.B) {
	var id Identity
	h, echo := http.Header{}, http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		delete(h, requestIDHeader)
		id.InitEcho(h, echo)
	}
}
