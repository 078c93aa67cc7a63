// Package hmacsig signs and verifies webhook bodies the way Stripe does:
// a header "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>",
// where the timestamp is inside the signature, so that a captured
// delivery cannot be replayed outside the tolerance. Switchyard's own
// webhooks (balance alerts) are signed with it and the generic payment
// provider's are verified with it (docs/payments.md, docs/accounts.md).
package hmacsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header is the name of the header that carries the signature.
const Header = "Switchyard-Signature"

// DefaultTolerance is how far a signature's timestamp may be from the
// receiver's clock, either way.
const DefaultTolerance = 5 * time.Minute

var (
	// ErrMalformed: no header, or no t= or v1= in it.
	ErrMalformed = errors.New("the signature header is missing or malformed")
	// ErrTimestamp: the timestamp is outside the tolerance.
	ErrTimestamp = errors.New("the signature's timestamp is outside the tolerance")
	// ErrSignature: no v1 signature matches.
	ErrSignature = errors.New("no signature matches the body")
)

// Sign returns the header value for body signed at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks header against body: a timestamp within tolerance of now
// and at least one v1 signature (several while a secret is rotated) made
// with secret.
func Verify(header string, body, secret []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrMalformed
	}
	if d := now.Sub(time.Unix(secs, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrSignature
}
