package admin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeMessagesNameNoGoInternals: what a malformed body is told
// speaks of its members and JSON values, never of Go types or structs.
func TestDecodeMessagesNameNoGoInternals(t *testing.T) {
	type Controls struct {
		ExpiresAt *int64   `json:"expires_at"`
		Models    []string `json:"models"`
	}
	type topup struct {
		Controls
		USD       string `json:"usd"`
		Reference string `json:"reference"`
		Count     int    `json:"count"`
	}
	tests := []struct{ body, want string }{
		{`{"usd":5}`, "usd must be a string, not a number."},
		{`{"count":"5"}`, "count must be a whole number, not a string."},
		{`{"count":1.5}`, "count must be a whole number, not a number."},
		// Members of an embedded struct are named as the body has them.
		{`{"models":"m"}`, "models must be an array, not a string."},
		// A time in the RFC 3339 the admin API once took is told what
		// to send.
		{`{"expires_at":"2030-01-31T00:00:00Z"}`, "expires_at is a time in Unix seconds, such as 1767225600 for 2026-01-01 00:00:00 UTC; not a string."},
		{`{"expires_at":1.5}`, "expires_at is a time in Unix seconds, such as 1767225600 for 2026-01-01 00:00:00 UTC; not a number."},
		{`[1]`, "The body must be a JSON object, not an array."},
		{`{"usd":"5",}`, "The body is not valid JSON (at byte 12)."},
		{`{"usd":"5"`, "The body ends before its JSON object does."},
		{`{"amount":"5"}`, `This route takes no member "amount".`},
	}
	for _, tt := range tests {
		dec := json.NewDecoder(bytes.NewReader([]byte(tt.body)))
		dec.DisallowUnknownFields()
		var dst topup
		err := dec.Decode(&dst)
		if err == nil {
			t.Fatalf("%s: decoded", tt.body)
		}
		got := decodeMessage(err)
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.body, got, tt.want)
		}
		if strings.Contains(got, "Go") || strings.Contains(got, "struct") || strings.Contains(got, "json:") {
			t.Errorf("%s: %q names Go internals", tt.body, got)
		}
	}
}
