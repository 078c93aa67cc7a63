package caddymodules

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// scrubbingKey wraps next so that it sees r without any query parameter
// that carries the caller's key. Clients that also put their key in the
// URL (?api_key=..., as some SDKs for other APIs do) would otherwise
// send it to the upstream with /v1's query, and into its logs and the
// proxy's. Headers need no such care: switchyard_proxy sends upstream an
// allow-list of them, and /v3 builds its upstream requests anew.
func scrubbingKey(r *http.Request, next caddyhttp.Handler) caddyhttp.Handler {
	key := bearer(r.Header.Get("Authorization"))
	if len(key) < 16 || r.URL.RawQuery == "" {
		return next
	}
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		scrubQuery(r.URL, key)
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

// bearer is the credential of an Authorization header, whatever its
// scheme's letter case.
func bearer(h string) string {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(cred)
}

// scrubQuery removes from u's query every parameter whose name or value
// contains key, however it was escaped.
func scrubQuery(u *url.URL, key string) {
	if !strings.Contains(u.RawQuery, key) {
		if q, err := url.QueryUnescape(u.RawQuery); err == nil && !strings.Contains(q, key) {
			return
		}
	}
	var kept []string
	for _, part := range strings.Split(u.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		n, _ := url.QueryUnescape(name)
		v, _ := url.QueryUnescape(value)
		if strings.Contains(part, key) || strings.Contains(n, key) || strings.Contains(v, key) {
			continue
		}
		kept = append(kept, part)
	}
	u.RawQuery = strings.Join(kept, "&")
}
