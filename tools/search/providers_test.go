package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/toolstest"
)

// recorded is what a fake provider server saw of one request.
type recorded struct {
	method, path string
	query        map[string][]string
	header       http.Header
	body         string
}

// fakeServer answers every request with status and body and records it.
// Read the records after the requests are done.
func fakeServer(t *testing.T, status int, body []byte) (*httptest.Server, *[]recorded) {
	t.Helper()
	var mu sync.Mutex
	var seen []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, recorded{r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// searchOnce runs q on p, which must make exactly one request to the
// fake server that records into seen, and returns the results and that
// request.
func searchOnce(t *testing.T, p Provider, seen *[]recorded, q Query) ([]Result, recorded) {
	t.Helper()
	got, err := p.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 1 {
		t.Fatalf("%d requests, want 1", len(*seen))
	}
	return got, (*seen)[0]
}

// wantRequest reports a request other than method path?query, or one
// whose User-Agent does not name the gateway.
func wantRequest(t *testing.T, req recorded, method, path string, query map[string][]string) {
	t.Helper()
	if req.method != method || req.path != path || !cmp.Equal(req.query, query) {
		t.Errorf("request %s %s %v, want %s %s %v", req.method, req.path, req.query, method, path, query)
	}
	if ua := req.header.Get("User-Agent"); !strings.Contains(ua, "Switchyard") {
		t.Errorf("User-Agent %q does not name Switchyard", ua)
	}
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSearxNGSearch(t *testing.T) {
	srv, seen := fakeServer(t, 200, toolstest.Testdata(t, "searxng.json"))
	p, err := NewSearxNG(srv.URL+"/searxng/", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, req := searchOnce(t, p, seen, Query{Text: "caddy health & checks", Count: 8})
	wantRequest(t, req, "GET", "/searxng/search", map[string][]string{"q": {"caddy health & checks"}, "format": {"json"}})
	want := []Result{
		{Title: "reverse_proxy (Caddyfile directive) — Caddy Documentation", URL: "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy",
			Snippet: "Proxies requests to one or more backends with configurable transport, load balancing, health checking, request manipulation, and buffering options. Active health checks &amp; passive health checks ..."},
		{Title: "Active health checks not working - Help - Caddy Community", URL: "https://caddy.community/t/active-health-checks-not-working/21337?utm_source=searx&utm_medium=web",
			Snippet:   "I have a reverse_proxy with two upstreams and health_uri /healthz, but Caddy keeps sending traffic to the backend that is down.\n\nCaddy version: v2.7.6",
			Published: date("2023-11-02T00:00:00Z")},
		{Title: "caddy/modules/caddyhttp/reverseproxy/healthchecks.go at master", URL: "https://github.com/caddyserver/caddy/blob/master/modules/caddyhttp/reverseproxy/healthchecks.go",
			Snippet: "HealthChecks configures active and passive health checks.", Published: date("2024-03-18T09:41:12.337Z")},
		{Title: "Active health checks not working", URL: "https://caddy.community/t/active-health-checks-not-working/21337/",
			Snippet: "Duplicate of the community thread, as another engine found it."},
		{Title: "Reverse proxy", URL: "https://en.wikipedia.org/wiki/Reverse_proxy",
			Snippet: "In computer networks, a reverse proxy or surrogate server is a proxy server that appears to any client to be an ordinary web server, but in reality merely acts as an intermediary that forwards the client's requests to one or more ordinary web servers."},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestBraveSearch(t *testing.T) {
	srv, seen := fakeServer(t, 200, toolstest.Testdata(t, "brave.json"))
	p, err := NewBrave(" secret-token ", srv.URL+"/res/v1/web/search", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, req := searchOnce(t, p, seen, Query{Text: "caddy health checks", Count: 50})
	wantRequest(t, req, "GET", "/res/v1/web/search", map[string][]string{"q": {"caddy health checks"}, "count": {"20"}})
	for h, want := range map[string]string{"X-Subscription-Token": "secret-token", "Accept": "application/json"} {
		if got := req.header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	wantURLs := []string{
		"https://caddyserver.com/docs/caddyfile/directives/reverse_proxy",
		"https://caddy.community/t/active-health-checks-not-working/21337",
		"https://caddyserver.com/docs/quick-starts/reverse-proxy?fbclid=IwAR0abc#load-balancing",
		"https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/health_checking",
	}
	var urls []string
	for _, r := range got {
		urls = append(urls, r.URL)
	}
	if !cmp.Equal(urls, wantURLs) {
		t.Errorf("URLs %v, want %v", urls, wantURLs)
	}
	// page_age wins over age; age is read when page_age is missing; a
	// relative age is no date.
	wantDates := []time.Time{date("2024-06-11T17:22:04Z"), date("2023-11-02T00:00:00Z"), date("2025-01-20T08:00:00Z"), {}}
	for i, r := range got {
		if !r.Published.Equal(wantDates[i]) {
			t.Errorf("result %d published %v, want %v", i, r.Published, wantDates[i])
		}
	}
	if got[1].Snippet != "I&#x27;ve set <strong>health_uri</strong> /healthz but Caddy keeps routing to the dead backend &amp; the logs show nothing." {
		t.Errorf("raw snippet %q: the provider should leave cleaning to Normalize", got[1].Snippet)
	}
	n := Normalize(got, 8)
	if n[1].Snippet != "I've set health_uri /healthz but Caddy keeps routing to the dead backend & the logs show nothing." ||
		n[0].Title != "reverse_proxy (Caddyfile directive) — Caddy Documentation" {
		t.Errorf("normalised %q / %q", n[0].Title, n[1].Snippet)
	}
}

func TestTavilySearch(t *testing.T) {
	srv, seen := fakeServer(t, 200, toolstest.Testdata(t, "tavily.json"))
	p, err := NewTavily("tvly-secret", srv.URL+"/search", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, req := searchOnce(t, p, seen, Query{Text: "caddy health checks", Count: 8})
	wantRequest(t, req, "POST", "/search", map[string][]string{})
	if got := req.header.Get("Authorization"); got != "Bearer tvly-secret" {
		t.Errorf("Authorization %q", got)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(req.body), &body); err != nil {
		t.Fatalf("body %q: %v", req.body, err)
	}
	wantBody := map[string]any{"query": "caddy health checks", "max_results": 8.0, "search_depth": "basic", "topic": "general"}
	if !cmp.Equal(body, wantBody) {
		t.Errorf("body %v, want %v", body, wantBody)
	}
	if len(got) != 2 || got[0].URL != "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy" ||
		!got[0].Published.IsZero() || !got[1].Published.Equal(date("2023-11-02T09:15:00Z")) {
		t.Errorf("results %+v", got)
	}
}

// TestKeysGoOnlyToTheirProvider runs every provider of a full
// configuration against one server and checks that each request carries
// its own provider's key and no other.
func TestKeysGoOnlyToTheirProvider(t *testing.T) {
	// Every provider fails, so that the chain tries them all.
	srv, recs := fakeServer(t, http.StatusBadGateway, nil)
	p, err := FromConfig(Config{
		SearxNGURL: srv.URL + "/searx",
		BraveKey:   "brave-key", BraveURL: srv.URL + "/brave",
		TavilyKey: "tavily-key", TavilyURL: srv.URL + "/tavily",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Search(context.Background(), Query{Text: "q", Count: 3}); err == nil {
		t.Fatal("no error from a chain of failing providers")
	}
	seen := *recs
	if len(seen) != 3 {
		t.Fatalf("%d requests, want 3", len(seen))
	}
	keys := map[string]string{"/searx/search": "", "/brave": "brave-key", "/tavily": "tavily-key"}
	for _, r := range seen {
		want, ok := keys[r.path]
		if !ok {
			t.Errorf("unexpected path %s", r.path)
			continue
		}
		dump := fmt.Sprint(r.header, r.query, r.body)
		for _, key := range []string{"brave-key", "tavily-key"} {
			if got := strings.Contains(dump, key); got != (key == want) {
				t.Errorf("%s: key %q sent = %v, want %v", r.path, key, got, key == want)
			}
		}
	}
}

func TestProviderErrors(t *testing.T) {
	big := append([]byte(`{"results":[`), []byte(strings.Repeat(`{"url":"https://example.com","title":"x"},`, MaxResponseBytes/40))...)
	big = append(big, []byte(`{}]}`)...)
	cases := []struct {
		name     string
		provider string // searxng, brave, tavily
		status   int
		body     []byte
		want     string // the message the model reads
		wantLog  string // part of the error for the log
	}{
		{name: "searxng 500", provider: "searxng", status: 500, body: []byte("Internal Server Error"), want: msgUnavailable, wantLog: "500"},
		{name: "searxng json format disabled", provider: "searxng", status: 403, body: []byte("<html>Forbidden</html>"), want: msgRefused,
			wantLog: "add json to search.formats"},
		{name: "searxng limiter", provider: "searxng", status: 429, body: []byte("Too Many Requests"), want: msgRateLimited, wantLog: "limiter"},
		{name: "searxng malformed JSON", provider: "searxng", status: 200, body: []byte(`{"results": [`), want: msgBadAnswer},
		{name: "searxng HTML page", provider: "searxng", status: 200, body: []byte(`<!DOCTYPE html><html>`), want: msgBadAnswer},
		{name: "searxng without results", provider: "searxng", status: 200, body: []byte(`{"error": "x"}`), want: msgBadAnswer},
		{name: "searxng oversize body", provider: "searxng", status: 200, body: big, want: msgBadAnswer, wantLog: "longer than"},
		{name: "searxng engines down", provider: "searxng", status: 200, body: toolstest.Testdata(t, "searxng-engines-down.json"), want: msgUnavailable,
			wantLog: "brave (HTTP error), duckduckgo (CAPTCHA), google (timeout)"},
		{name: "brave invalid token", provider: "brave", status: 422, body: toolstest.Testdata(t, "brave-error.json"), want: msgRefused,
			wantLog: "SUBSCRIPTION_TOKEN_INVALID"},
		{name: "brave rate limited", provider: "brave", status: 429, body: []byte(`{"type":"ErrorResponse","error":{"code":"RATE_LIMITED","detail":"slow down"}}`), want: msgRateLimited},
		{name: "brave bad query", provider: "brave", status: 422, body: []byte(`{"type":"ErrorResponse","error":{"code":"VALIDATION","detail":"q too long"}}`), want: msgBadQuery},
		{name: "brave error answer with 200", provider: "brave", status: 200, body: toolstest.Testdata(t, "brave-error.json"), want: msgBadAnswer},
		{name: "brave 503", provider: "brave", status: 503, body: nil, want: msgUnavailable},
		{name: "tavily bad key", provider: "tavily", status: 401, body: []byte(`{"detail":{"error":"Unauthorized"}}`), want: msgRefused},
		{name: "tavily plan limit", provider: "tavily", status: 432, body: []byte(`{}`), want: msgRefused, wantLog: "usage limit"},
		{name: "tavily malformed", provider: "tavily", status: 200, body: []byte(`{"results": 3}`), want: msgBadAnswer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeServer(t, tc.status, tc.body)
			p := newTestProvider(t, tc.provider, srv.URL)
			_, err := p.Search(context.Background(), Query{Text: "q", Count: 5})
			checkCallError(t, err, tc.want, tc.wantLog)
		})
	}
}

func TestProviderTimeout(t *testing.T) {
	for _, provider := range []string{"searxng", "brave", "tavily"} {
		t.Run(provider, func(t *testing.T) {
			srv := hangingServer(t)
			p := newTestProvider(t, provider, srv.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := p.Search(ctx, Query{Text: "q"})
			checkCallError(t, err, msgTimeout, "")
		})
	}
}

func TestProviderUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // nothing listens there any more
	p := newTestProvider(t, "searxng", base)
	_, err := p.Search(context.Background(), Query{Text: "q"})
	checkCallError(t, err, msgUnavailable, "")
}

// hangingServer accepts requests and never answers them.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: cleanups run last in, first out
	return srv
}

func newTestProvider(t *testing.T, name, base string) Provider {
	t.Helper()
	var p Provider
	var err error
	switch name {
	case "searxng":
		p, err = NewSearxNG(base, nil)
	case "brave":
		p, err = NewBrave("brave-key", base+"/res/v1/web/search", nil)
	case "tavily":
		p, err = NewTavily("tavily-key", base+"/search", nil)
	default:
		t.Fatalf("unknown provider %q", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkCallError checks that err is a *tools.CallError telling the model
// want, that the full error (for the log) contains wantLog, and that
// neither mentions a key.
func checkCallError(t *testing.T, err error, want, wantLog string) {
	t.Helper()
	var ce *tools.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *tools.CallError", err, err)
	}
	if got := tools.ModelMessage(err); got != "error: "+want {
		t.Errorf("model reads %q, want %q", got, "error: "+want)
	}
	if !strings.Contains(err.Error(), wantLog) {
		t.Errorf("log error %q does not contain %q", err.Error(), wantLog)
	}
	for _, key := range []string{"brave-key", "tavily-key", "http://127.0.0.1"} {
		if strings.Contains(ce.Message, key) {
			t.Errorf("model message %q contains %q", ce.Message, key)
		}
	}
	for _, key := range []string{"brave-key", "tavily-key"} {
		if strings.Contains(err.Error(), key) {
			t.Errorf("log error %q contains the key", err.Error())
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bb := range []struct {
		provider, file string
		parse          func([]byte) ([]Result, error)
	}{
		{"SearxNG", "searxng.json", parseSearxNG},
		{"Brave", "brave.json", parseBrave},
		{"Tavily", "tavily.json", parseTavily},
	} {
		b.Run(bb.provider, func(b *testing.B) {
			body := toolstest.Testdata(b, bb.file)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := bb.parse(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestSearxNGNoResultsIsNotAnError(t *testing.T) {
	srv, _ := fakeServer(t, 200, toolstest.Testdata(t, "searxng-empty.json"))
	p := newTestProvider(t, "searxng", srv.URL)
	rs, err := p.Search(context.Background(), Query{Text: "zzqxv unlikely query"})
	if err != nil || rs == nil || len(rs) != 0 {
		t.Errorf("results %v, error %v; want an empty list", rs, err)
	}
}
