package caddymodules

import "net/http"

// Request headers the handlers read on every request, in the canonical
// form the server keeps the names it reads in (TestHeaderNamesAreCanonical).
const (
	headerAuthorization = "Authorization"
	headerExpect        = "Expect"
	headerUserID        = "X-User-Id"
)

// headerValue is h.Get(name) for a name already in its canonical form,
// as the constants above are: Get would canonicalise it anew, a walk
// over its bytes, on every call.
func headerValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}
