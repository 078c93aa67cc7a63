package policy

import "net/http"

// Identity is what authentication learnt of a request, offered to the
// handlers and logs after it as {switchyard.*} placeholders. It is one
// provider of the request's replacer rather than a value set per
// placeholder, each of which would box its value on every request for the
// few that are read.
type Identity struct {
	RequestID, ChargeID string
	Principal           Principal
	Authenticated       bool
}

// NewIdentity is the identity of a request with headers h, before it is
// authenticated: a new charge id, and the client's X-Request-Id when it
// is a valid one, else a new id, which is set in h for the handlers after.
func NewIdentity(h http.Header) *Identity {
	id := new(Identity)
	id.Init(h)
	return id
}

// Init makes id what NewIdentity returns, in place: for a caller that
// keeps the identity in a value of its own.
func (id *Identity) Init(h http.Header) {
	*id = Identity{ChargeID: NewChargeID(), RequestID: h.Get("X-Request-Id")}
	if !ValidRequestID(id.RequestID) {
		// Not the charge id: that is the ledger's reference of the
		// request's charge, which no client is handed.
		id.RequestID = NewRequestID()
		h.Set("X-Request-Id", id.RequestID)
	}
}

// Placeholder is the value of the placeholder key (without braces); the
// account's and key's only once the request is authenticated.
func (id *Identity) Placeholder(key string) (any, bool) {
	switch key {
	case "switchyard.request_id":
		return id.RequestID, true
	case "switchyard.charge_id":
		return id.ChargeID, true
	}
	if !id.Authenticated {
		return nil, false
	}
	switch key {
	case "switchyard.account_id":
		return id.Principal.AccountID, true
	case "switchyard.account":
		return id.Principal.AccountName, true
	case "switchyard.key_id":
		return id.Principal.KeyID, true
	case "switchyard.key_hint":
		return id.Principal.KeyHint, true
	}
	return nil, false
}
