package policy

import (
	"net/http"
	"testing"
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
