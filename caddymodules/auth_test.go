package caddymodules

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
		if got, want := validRequestID(id), pattern.MatchString(id); got != want {
			t.Errorf("validRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}
