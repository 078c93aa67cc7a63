package caddymodules

import (
	"net/http"
	"testing"
)

// headerValue finds only a name in the form the server keeps: the names
// it is given must be canonical, or it would find none.
func TestHeaderNamesAreCanonical(t *testing.T) {
	for _, name := range []string{headerAuthorization, headerExpect, headerUserID, headerIncludeCost} {
		if c := http.CanonicalHeaderKey(name); c != name {
			t.Errorf("%q is not canonical: %q", name, c)
		}
		h := http.Header{}
		h.Set(name, "v")
		if got := headerValue(h, name); got != h.Get(name) {
			t.Errorf("headerValue(%q) = %q, Get %q", name, got, h.Get(name))
		}
	}
}
