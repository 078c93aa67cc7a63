package policy

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidRequestID pins the request id rule against the pattern it
// spells out.
func TestValidRequestID(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	for _, id := range []string{"", "a", "req-1", "A.b_c:d-e", strings.Repeat("x", 128), strings.Repeat("x", 129),
		"with space", "slash/", "é", "new\nline", "tab\t", "null\x00", "ok123", "<script>"} {
		if got, want := ValidRequestID(id), pattern.MatchString(id); got != want {
			t.Errorf("ValidRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}

// A request id the gateway makes is a version-4 UUID, a valid request id
// itself, and never the same twice.
func TestNewRequestID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := make(map[string]bool)
	for range 10_000 {
		id := NewRequestID()
		if !v4.MatchString(id) || !ValidRequestID(id) {
			t.Fatalf("NewRequestID() = %q, want a version-4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("%q made twice", id)
		}
		seen[id] = true
	}
}
