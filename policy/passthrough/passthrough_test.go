package passthrough

import (
	"net/http"
	"net/http/httptest"
	"path"
	"testing"
)

// v1Routes are caddymodules.DefaultV1Routes.
var v1Routes = []string{
	"POST /chat/completions",
	"POST /completions",
	"POST /embeddings",
	"POST /responses",
	"GET /models",
	"GET /models/*",
}

func TestRoute(t *testing.T) {
	tests := []struct {
		name, method, target string
		ok                   bool
		path                 string
	}{
		{name: "chat", method: "POST", target: "/v1/chat/completions", ok: true, path: "/v1/chat/completions"},
		{name: "prefix in another case is written back", method: "POST", target: "/V1/chat/completions", ok: true, path: "/v1/chat/completions"},
		{name: "models", method: "GET", target: "/v1/models", ok: true, path: "/v1/models"},
		{name: "one model", method: "GET", target: "/v1/models/gpt-x", ok: true, path: "/v1/models/gpt-x"},
		{name: "files are another tenant's business", method: "POST", target: "/v1/files"},
		{name: "batches", method: "GET", target: "/v1/batches"},
		{name: "wrong method", method: "GET", target: "/v1/chat/completions"},
		{name: "dot segments", method: "POST", target: "/v1/models/../files"},
		{name: "encoded slash", method: "GET", target: "/v1/models/a%2F..%2Ffiles"},
		{name: "nothing below the prefix", method: "GET", target: "/v1"},
		{name: "other prefix", method: "POST", target: "/v2/chat/completions"},
		{name: "a longer word is not the prefix", method: "POST", target: "/v1x/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if ok := Route(r, "/v1", v1Routes); ok != tt.ok {
				t.Fatalf("Route = %v, want %v", ok, tt.ok)
			}
			if tt.ok && r.URL.Path != tt.path {
				t.Errorf("path %q, want %q", r.URL.Path, tt.path)
			}
		})
	}
}

func TestHeaderFilters(t *testing.T) {
	h := http.Header{}
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization", "Content-Type", "X-Request-Id", "Openai-Organization"} {
		h.Set(k, "sk-secret")
	}
	FilterRequestHeaders(h)
	for _, k := range []string{"X-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization", "Openai-Organization"} {
		if h.Get(k) != "" {
			t.Errorf("%s would reach the upstream", k)
		}
	}
	if h.Get("Content-Type") == "" || h.Get("X-Request-Id") == "" {
		t.Errorf("needed headers dropped: %v", h)
	}

	rec := httptest.NewRecorder()
	rec.Header().Set("X-Ratelimit-Limit-Requests", "60") // the gateway's own
	f := NewHeaderFilter(rec)
	f.Header().Set("Set-Cookie", "session=upstream")
	f.Header().Set("Openai-Organization", "operator-org")
	f.Header().Set("Content-Type", "text/event-stream")
	f.WriteHeader(200)
	if rec.Header().Get("Set-Cookie") != "" || rec.Header().Get("Openai-Organization") != "" {
		t.Errorf("upstream headers reached the client: %v", rec.Header())
	}
	if rec.Header().Get("Content-Type") == "" || rec.Header().Get("X-Ratelimit-Limit-Requests") == "" {
		t.Errorf("headers lost: %v", rec.Header())
	}
}

// The upstream's banners never pass: a name the gateway set before
// proxying keeps the gateway's value, as reverse_proxy replaces Server
// and adds to the others.
func TestHeaderFilterKeepsTheGatewaysOwnValues(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Server", "Caddy")
	rec.Header().Set("X-Request-Id", "req-gateway")
	rec.Header().Set("X-Ratelimit-Limit-Requests", "60")
	rec.Header().Set("X-Ratelimit-Remaining-Requests", "59")
	f := NewHeaderFilter(rec)
	delete(f.Header(), "Server") // as reverse_proxy does
	f.Header().Add("Server", "vllm/0.6 (gpu-node-7)")
	f.Header().Add("X-Request-Id", "req-upstream")
	f.Header().Add("X-Powered-By", "internal")
	f.Header().Add("Via", "1.1 Caddy")
	f.Header().Add("Via", "1.1 internal-lb")
	f.Header().Set("X-Ratelimit-Limit-Requests", "1000") // a value of the same length
	f.WriteHeader(200)
	h := rec.Header()
	if got := h.Values("X-Ratelimit-Limit-Requests"); len(got) != 1 || got[0] != "60" {
		t.Errorf("X-Ratelimit-Limit-Requests %q, want the gateway's", got)
	}
	if got := h.Values("X-Ratelimit-Remaining-Requests"); len(got) != 1 || got[0] != "59" {
		t.Errorf("X-Ratelimit-Remaining-Requests %q, want the gateway's, untouched", got)
	}
	if got := h.Values("Server"); len(got) != 1 || got[0] != "Caddy" {
		t.Errorf("Server %q, want the gateway's", got)
	}
	if got := h.Values("X-Request-Id"); len(got) != 1 || got[0] != "req-gateway" {
		t.Errorf("X-Request-Id %q, want the gateway's", got)
	}
	if h.Get("X-Powered-By") != "" || len(h.Values("Via")) != 0 {
		t.Errorf("banners reached the client: %v", h)
	}
}

func TestUpstreamHeaders(t *testing.T) {
	r := httptest.NewRequest("POST", "http://gateway.example/v1/chat/completions", nil)
	r.Header.Set("Authorization", "Bearer sk-caller")
	NewUpstreamHeaders("api.example.com", "k1").Apply(r)
	if r.Host != "api.example.com" || r.Header.Get("Authorization") != "Bearer k1" {
		t.Errorf("with a key: Host %q, Authorization %q", r.Host, r.Header.Get("Authorization"))
	}
	NewUpstreamHeaders("127.0.0.1:8000", "").Apply(r)
	if r.Host != "127.0.0.1:8000" || len(r.Header.Values("Authorization")) != 0 {
		t.Errorf("without a key: Host %q, Authorization %q", r.Host, r.Header.Values("Authorization"))
	}
}

// The allow-lists, name by name; a request header a handler set under a
// name not in canonical form is judged by its canonical form.
func TestAllowLists(t *testing.T) {
	for _, name := range []string{"Accept", "Accept-Encoding", "Content-Type", "Content-Length", "User-Agent", "X-Request-Id", "Openai-Beta", "Authorization"} {
		if !forwardedRequestHeader(name) {
			t.Errorf("request header %s is not forwarded", name)
		}
	}
	for _, name := range []string{"Cookie", "X-Api-Key", "Openai-Organization", "X-Stainless-Os", "Host", "content-type", ""} {
		if forwardedRequestHeader(name) {
			t.Errorf("request header %q is forwarded", name)
		}
	}
	for _, name := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Cache-Control", "Retry-After", "Date", "Vary"} {
		if !returnedResponseHeader(name) {
			t.Errorf("response header %s is not returned", name)
		}
	}
	for _, name := range []string{"Set-Cookie", "Server", "Via", "X-Powered-By", "Openai-Organization", "X-Ratelimit-Limit-Requests", "content-type"} {
		if returnedResponseHeader(name) {
			t.Errorf("response header %q is returned", name)
		}
	}
	h := http.Header{"content-type": {"application/json"}, "x-api-key": {"sk-secret"}}
	FilterRequestHeaders(h)
	if len(h) != 1 || h["content-type"] == nil {
		t.Errorf("filtered to %v, want the content type alone", h)
	}
}

// A header name set outside the server's parsing is let through exactly
// when its canonical form is: the filter does not canonicalise it, and
// must agree with what canonicalising would let through.
func TestFilterRequestHeadersAgreesWithCanonicalNames(t *testing.T) {
	names := []string{
		"content-type", "CONTENT-TYPE", "cOnTeNt-LeNgTh", "accept", "ACCEPT-encoding", "user-agent", "x-request-id",
		"OPENAI-BETA", "authorization", "Content_Type", "Content-Type ", " Accept", "Accept\x00", "Uſer-Agent",
		"Accept-Encodinɡ", "Authori\u212Aation", "X-Stainless-Lang", "x-stainless-os", "Cookie", "cookie", "X-Api-Key",
		"Content-Typf", "Content-Typ", "Content-Types", "Acceqt", "@ccept", "Accept-Encoding\r", "[ccept", "`ccept",
		"Content\x2dType", "Content\xadType", "", "-", "Host", "host",
	}
	for _, name := range names {
		want := forwardedRequestHeader(name) || forwardedRequestHeader(http.CanonicalHeaderKey(name))
		h := http.Header{name: {"v"}}
		FilterRequestHeaders(h)
		if got := len(h) == 1; got != want {
			t.Errorf("%q let through: %v, want %v (canonical %q)", name, got, want, http.CanonicalHeaderKey(name))
		}
	}
}

// isClean agrees with path.Clean on every path that starts with a slash.
func FuzzIsClean(f *testing.F) {
	for _, p := range []string{"/", "//", "/a", "/a/", "/a//b", "/./a", "/a/.", "/a/..", "/../a", "/a/.b", "/a/..b", "/.a/b.",
		"/chat/completions", "/models/gpt-4o", "/a/b/c/../d", "/...", "/a/./"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		p = "/" + p
		if got, want := isClean(p), path.Clean(p) == p; got != want {
			t.Errorf("isClean(%q) = %v, path.Clean gives %q", p, got, path.Clean(p))
		}
	})
}
