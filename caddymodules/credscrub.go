package caddymodules

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/policy/passthrough"
)

// scrubbingKey wraps next so that it sees r without any query parameter
// that carries the caller's key. Clients that also put their key in the
// URL (?api_key=..., as some SDKs for other APIs do) would otherwise
// send it to the upstream with /v1's query, and into its logs and the
// proxy's. Headers need no such care: switchyard_proxy sends upstream an
// allow-list of them, and /v3 builds its upstream requests anew.
func scrubbingKey(r *http.Request, next caddyhttp.Handler) caddyhttp.Handler {
	if r.URL.RawQuery == "" {
		return next
	}
	key := passthrough.Bearer(headerValue(r.Header, headerAuthorization))
	if len(key) < 16 {
		return next
	}
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		passthrough.ScrubQuery(r.URL, key)
		// Logs of the request show RequestURI, as it came in.
		if path, _, found := strings.Cut(r.RequestURI, "?"); found {
			r.RequestURI = path
			if r.URL.RawQuery != "" {
				r.RequestURI += "?" + r.URL.RawQuery
			}
		}
		return next.ServeHTTP(w, r)
	})
}
