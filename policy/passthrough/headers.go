package passthrough

import "net/http"

// forwardedRequestHeader reports whether a request header of the
// canonical name goes upstream: only these do, and every other one
// (cookies, other credential headers, tracing of the caller's own
// systems) stays at the gateway. reverse_proxy sets Host, the
// hop-by-hop headers and X-Forwarded-* itself, and Authorization is set
// to the operator's key. A switch, not a map: the names are compared,
// not hashed, every header of every request.
func forwardedRequestHeader(name string) bool {
	switch name {
	case "Accept",
		"Accept-Encoding",
		"Content-Type",
		"Content-Length",
		"User-Agent",
		"X-Request-Id",
		"Openai-Beta",
		"Authorization": // replaced by the upstream key or removed by the proxy config
		return true
	}
	return false
}

// returnedResponseHeader reports whether an upstream response header of
// the name reaches the client: only these do, and cookies, the upstream
// account's organisation and limits, and server banners (Server,
// X-Powered-By, Via) stay behind. Headers the gateway set itself before
// proxying (Server, X-Request-Id, x-ratelimit-*) keep the gateway's
// values, whatever the upstream sent under the same names.
func returnedResponseHeader(name string) bool {
	switch name {
	case "Content-Type",
		"Content-Length",
		"Content-Encoding",
		"Cache-Control",
		"Retry-After",
		"Date",
		"Vary":
		return true
	}
	return false
}

// forwardedRequestHeaders are the names forwardedRequestHeader lets
// through, for forwardedInAnyCase.
var forwardedRequestHeaders = [...]string{
	"Accept", "Accept-Encoding", "Content-Type", "Content-Length", "User-Agent", "X-Request-Id", "Openai-Beta", "Authorization",
}

// forwardedInAnyCase reports whether the canonical form of name
// (http.CanonicalHeaderKey) is let through: whether name is one of the
// names let through but for the case of its ASCII letters, which is all
// that canonicalising changes. Every request's headers the SDKs add
// (X-Stainless-*) would otherwise be canonicalised, a walk over each of
// their bytes, to find what their length already tells.
func forwardedInAnyCase(name string) bool {
	for _, f := range forwardedRequestHeaders {
		if len(f) == len(name) && equalFoldASCII(f, name) {
			return true
		}
	}
	return false
}

// equalFoldASCII reports whether a and b, of one length, are equal but
// for the case of their ASCII letters. Unlike strings.EqualFold it folds
// no other letter: "ſ" is no "s" to a header name.
func equalFoldASCII(a, b string) bool {
	for i := range len(a) {
		if x, y := a[i], b[i]; x != y && (x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z') {
			return false
		}
	}
	return true
}

// FilterRequestHeaders drops every request header not on the list.
func FilterRequestHeaders(h http.Header) {
	for name := range h {
		// A name in the map is canonical but where code set it
		// directly; only a name not let through as it is needs its
		// canonical form looked at.
		if !forwardedRequestHeader(name) && !forwardedInAnyCase(name) {
			delete(h, name)
		}
	}
}

// HeaderFilter lets through, of the headers the upstream adds to the
// response, only those on the list; those the gateway set before
// proxying keep the gateway's values. reverse_proxy adds the upstream's
// headers to the gateway's (and replaces the gateway's Server with the
// upstream's), so a name on both sides would otherwise carry the
// upstream's value to the client.
type HeaderFilter struct {
	http.ResponseWriter
	own    []ownHeader // set before proxying: a few, looked through
	ownBuf [8]ownHeader
}

type ownHeader struct {
	name   string
	values []string
}

// NewHeaderFilter filters the headers of the answer written to w; the
// headers w holds already are the gateway's own.
func NewHeaderFilter(w http.ResponseWriter) *HeaderFilter {
	f := new(HeaderFilter)
	f.Init(w)
	return f
}

// Init makes f what NewHeaderFilter returns, in place: for a caller that
// keeps the filter in a value of its own.
func (f *HeaderFilter) Init(w http.ResponseWriter) {
	*f = HeaderFilter{ResponseWriter: w}
	f.own = f.ownBuf[:0]
	for name, values := range w.Header() {
		// The slice is kept, not copied: the proxy adds by appending
		// to a copy or replacing it, which leaves these values as
		// they are.
		f.own = append(f.own, ownHeader{name, values[:len(values):len(values)]})
	}
}

func (f *HeaderFilter) isOwn(name string) bool {
	for _, o := range f.own {
		if o.name == name {
			return true
		}
	}
	return false
}

// WriteHeader drops the headers not let through, then writes code.
func (f *HeaderFilter) WriteHeader(code int) {
	h := f.Header()
	for name := range h {
		if !returnedResponseHeader(name) && !f.isOwn(name) {
			delete(h, name)
		}
	}
	for _, o := range f.own {
		// Only what the proxy replaced or removed (the gateway's
		// Server, say): storing every name anew cost two allocations
		// and about 600 bytes of map storage on the /v1 answers of
		// BenchmarkV1JSON (caddymodules).
		if cur, ok := h[o.name]; !ok || !sameValues(cur, o.values) {
			h[o.name] = o.values
		}
	}
	f.ResponseWriter.WriteHeader(code)
}

// sameValues reports whether a and b are one slice of values.
func sameValues(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (f *HeaderFilter) Write(b []byte) (int, error) { return f.ResponseWriter.Write(b) }

// Unwrap lets http.ResponseController reach the writer below, so that
// streams still flush event by event.
func (f *HeaderFilter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// UpstreamHeaders are what the request names of the upstream: its Host
// and the operator's key, in place of any credential of the caller's.
type UpstreamHeaders struct {
	host          string
	authorization string // "" sends none
}

// NewUpstreamHeaders names the upstream at host, and apiKey ("": none)
// as the operator's key.
func NewUpstreamHeaders(host, apiKey string) UpstreamHeaders {
	u := UpstreamHeaders{host: host}
	if apiKey != "" {
		u.authorization = "Bearer " + apiKey
	}
	return u
}

// Apply sets u on r, whose headers FilterRequestHeaders already cut down
// to the allowed ones.
func (u UpstreamHeaders) Apply(r *http.Request) {
	r.Host = u.host
	if u.authorization == "" {
		delete(r.Header, "Authorization")
		return
	}
	r.Header["Authorization"] = []string{u.authorization}
}
