package passthrough

import (
	"net/url"
	"testing"
)

func TestScrubQuery(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"a=1&b=2", "a=1&b=2"},
		{"api_key=" + key, ""},
		{"a=1&api_key=" + key + "&b=2", "a=1&b=2"},
		{"a=1&k=" + url.QueryEscape("Bearer "+key), "a=1"},
		{"a=1&k=%73k-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN", "a=1"},
		{key + "=x&a=1", "a=1"},
	} {
		u := &url.URL{Path: "/v1/models", RawQuery: tc.in}
		ScrubQuery(u, key)
		if u.RawQuery != tc.want {
			t.Errorf("ScrubQuery(%q) = %q, want %q", tc.in, u.RawQuery, tc.want)
		}
	}
	if got := Bearer("bearer " + key); got != key {
		t.Errorf("bearer: %q", got)
	}
	if got := Bearer("Basic " + key); got != "" {
		t.Errorf("bearer of Basic: %q", got)
	}
}
