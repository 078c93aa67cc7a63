package caddymodules

import (
	"net/http"
	"path"
	"strings"
)

// DefaultV1Routes are the /v1 routes passed upstream when a Proxy names
// none: what a chat client needs, and nothing that would share the
// operator's upstream account between tenants (files, batches, stored
// responses, fine-tunes). POST /responses creates a response without
// reading any stored one (billing.ParseResponses refuses what would).
var DefaultV1Routes = []string{
	"POST /chat/completions",
	"POST /completions",
	"POST /embeddings",
	"POST /responses",
	"GET /models",
	"GET /models/*",
}

// forwardedRequestHeaders are the only request headers sent upstream;
// every other one (cookies, other credential headers, tracing of the
// caller's own systems) stays at the gateway. reverse_proxy sets Host,
// the hop-by-hop headers and X-Forwarded-* itself, and Authorization is
// set to the operator's key.
var forwardedRequestHeaders = map[string]bool{
	"Accept":          true,
	"Accept-Encoding": true,
	"Content-Type":    true,
	"Content-Length":  true,
	"User-Agent":      true,
	"X-Request-Id":    true,
	"Openai-Beta":     true,
	"Authorization":   true, // replaced by the upstream key or removed by the proxy config
}

// returnedResponseHeaders are the only upstream response headers the
// client sees; cookies, the upstream account's organisation and limits,
// and server banners (Server, X-Powered-By, Via) stay behind. Headers the
// gateway set itself before proxying (Server, X-Request-Id,
// x-ratelimit-*) keep the gateway's values, whatever the upstream sent
// under the same names.
var returnedResponseHeaders = map[string]bool{
	"Content-Type":     true,
	"Content-Length":   true,
	"Content-Encoding": true,
	"Cache-Control":    true,
	"Retry-After":      true,
	"Date":             true,
	"Vary":             true,
}

// route matches a method and a path below the prefix against the
// allowed routes ("METHOD /path", a trailing "/*" matching one more
// segment or more).
func routeAllowed(routes []string, method, rest string) bool {
	for _, r := range routes {
		m, p, ok := strings.Cut(r, " ")
		if !ok || m != method {
			continue
		}
		if prefix, wild := strings.CutSuffix(p, "/*"); wild {
			if strings.HasPrefix(rest, prefix+"/") && len(rest) > len(prefix)+1 {
				return true
			}
			continue
		}
		if rest == p {
			return true
		}
	}
	return false
}

// admitRoute normalises r's path below prefix and checks it against the
// allowed routes. The prefix is matched without regard to case, as
// Caddy's path matcher does, and written back in its configured case so
// that the upstream rewrite always applies: a request can never leave
// the upstream's base path. Dot segments and encoded slashes are
// refused rather than interpreted.
func admitRoute(r *http.Request, prefix string, routes []string) error {
	p := r.URL.Path
	if len(p) < len(prefix) || !strings.EqualFold(p[:len(prefix)], prefix) {
		return routeNotFound(r)
	}
	rest := p[len(prefix):]
	if rest == "" || rest[0] != '/' || path.Clean(rest) != rest || strings.Contains(strings.ToLower(r.URL.RawPath), "%2f") {
		return routeNotFound(r)
	}
	if !routeAllowed(routes, r.Method, rest) {
		return routeNotFound(r)
	}
	if p[:len(prefix)] != prefix {
		r.URL.Path = prefix + rest
	}
	r.URL.RawPath = ""
	return nil
}

func routeNotFound(r *http.Request) error { return notServed(r) }

// filterRequestHeaders drops every request header not on the list.
func filterRequestHeaders(h http.Header) {
	for name := range h {
		if !forwardedRequestHeaders[http.CanonicalHeaderKey(name)] {
			delete(h, name)
		}
	}
}

// headerFilter lets through, of the headers the upstream adds to the
// response, only those on the list; those the gateway set before
// proxying keep the gateway's values. reverse_proxy adds the upstream's
// headers to the gateway's (and replaces the gateway's Server with the
// upstream's), so a name on both sides would otherwise carry the
// upstream's value to the client.
type headerFilter struct {
	http.ResponseWriter
	own    []ownHeader // set before proxying: a few, looked through
	ownBuf [8]ownHeader
}

type ownHeader struct {
	name   string
	values []string
}

func newHeaderFilter(w http.ResponseWriter) *headerFilter {
	f := &headerFilter{ResponseWriter: w}
	f.own = f.ownBuf[:0]
	for name, values := range w.Header() {
		// The slice is kept, not copied: the proxy adds by appending
		// to a copy or replacing it, which leaves these values as
		// they are.
		f.own = append(f.own, ownHeader{name, values[:len(values):len(values)]})
	}
	return f
}

func (f *headerFilter) isOwn(name string) bool {
	for _, o := range f.own {
		if o.name == name {
			return true
		}
	}
	return false
}

func (f *headerFilter) WriteHeader(code int) {
	h := f.Header()
	for name := range h {
		if !returnedResponseHeaders[name] && !f.isOwn(name) {
			delete(h, name)
		}
	}
	for _, o := range f.own {
		h[o.name] = o.values
	}
	f.ResponseWriter.WriteHeader(code)
}

func (f *headerFilter) Write(b []byte) (int, error) { return f.ResponseWriter.Write(b) }

// Unwrap lets http.ResponseController reach the writer below, so that
// streams still flush event by event.
func (f *headerFilter) Unwrap() http.ResponseWriter { return f.ResponseWriter }
