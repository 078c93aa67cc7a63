package caddymodules

import (
	"net/http/httptest"
	"testing"
)

func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"203.0.113.7:40000":          "203.0.113.7",
		"[::ffff:203.0.113.7]:40000": "203.0.113.7",
		"[2001:db8:1:2:3::9]:40000":  "2001:db8:1:2::/64",
		"not an address":             "not an address",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if got := clientAddr(r); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", remote, got, want)
		}
	}
}
