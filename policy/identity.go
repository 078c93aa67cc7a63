package policy

import (
	"encoding/hex"
	"net/http"

	"github.com/google/uuid"
)

// Identity is what authentication learnt of a request, offered to the
// handlers and logs after it as {switchyard.*} placeholders. It is one
// provider of the request's replacer rather than a value set per
// placeholder, each of which would box its value on every request for the
// few that are read.
type Identity struct {
	RequestID, ChargeID string
	Principal           Principal
	Authenticated       bool

	// echoed holds the X-Request-Id values InitEcho sets in the request's
	// and the answer's headers, each one's slice of it: an identity kept
	// in a value of the caller's takes no array of their own. Nothing
	// writes to a header's values in place; they are replaced.
	echoed [2]string
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
func (id *Identity) Init(h http.Header) { id.InitEcho(h, nil) }

// InitEcho is Init that also sets the request id as X-Request-Id in
// echo, the headers of the answer, when echo is not nil. A request that
// comes without an id of its own gets both ids in one string, and the
// headers' values live in the identity: one allocation where four would
// be.
func (id *Identity) InitEcho(h, echo http.Header) {
	// The name as the server keeps it: Get would canonicalise it anew.
	var rid string
	if v := h[requestIDHeader]; len(v) > 0 {
		rid = v[0]
	}
	if ValidRequestID(rid) {
		*id = Identity{ChargeID: NewChargeID(), RequestID: rid}
		if echo != nil {
			id.echoed[1] = rid
			echo[requestIDHeader] = id.echoed[1:2:2]
		}
		return
	}
	// Not the charge id: that is the ledger's reference of the request's
	// charge, which no client is handed.
	var buf [2 * uuidLen]byte
	putUUID(buf[:uuidLen], newChargeUUID())
	putUUID(buf[uuidLen:], newRequestUUID())
	ids := string(buf[:])
	*id = Identity{ChargeID: ids[:uuidLen], RequestID: ids[uuidLen:]}
	id.echoed = [2]string{id.RequestID, id.RequestID}
	h[requestIDHeader] = id.echoed[0:1:1]
	if echo != nil {
		echo[requestIDHeader] = id.echoed[1:2:2]
	}
}

// requestIDHeader is X-Request-Id, in the canonical form Header.Set
// would give it.
const requestIDHeader = "X-Request-Id"

// uuidLen is the length of a UUID in its text form.
const uuidLen = 36

// putUUID writes u to dst in its text form, as u.String() returns it.
func putUUID(dst []byte, u uuid.UUID) {
	hex.Encode(dst[0:8], u[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], u[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], u[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], u[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:], u[10:])
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
