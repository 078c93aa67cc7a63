package search

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/tools/toolstest"
)

// redirecting answers every request with a redirect to target (path
// and query kept) with the given status.
func redirecting(t *testing.T, status int, target string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.RequestURI(), status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// elsewhere is a server on another origin that must never be reached: it
// records every request it gets, headers included.
type elsewhere struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newElsewhere(t *testing.T) *elsewhere {
	t.Helper()
	e := new(elsewhere)
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, fmt.Sprintf("%s %s %v", r.Method, r.URL, r.Header))
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"results": [], "web": {"results": []}}`))
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// TestRedirectsStayWithTheProvider has each provider's endpoint redirect
// to another origin: a loopback address on another port (a redirect
// into the gateway's own network), another host name for the same
// address, and the same host over another scheme. The other origin must
// see no request at all, so no key reaches it, and the model reads that
// the service is unavailable.
func TestRedirectsStayWithTheProvider(t *testing.T) {
	for _, provider := range []string{"searxng", "brave", "tavily"} {
		for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(fmt.Sprintf("%s %d to another port", provider, status), func(t *testing.T) {
				other := newElsewhere(t)
				srv := redirecting(t, status, other.URL)
				p := newTestProvider(t, provider, srv.URL)
				_, err := p.Search(context.Background(), Query{Text: "q"})
				if got := other.requests(); len(got) > 0 {
					t.Errorf("the other origin was fetched: %q", got)
				}
				checkCallError(t, err, msgUnavailable, "redirect")
			})
		}
		t.Run(provider+" to another host name of the same address", func(t *testing.T) {
			other := newElsewhere(t)
			// localhost and 127.0.0.1 reach the same listener, but are
			// different origins: the key belongs to the one configured.
			target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
			srv := redirecting(t, http.StatusFound, target)
			p := newTestProvider(t, provider, srv.URL)
			_, err := p.Search(context.Background(), Query{Text: "q"})
			if got := other.requests(); len(got) > 0 {
				t.Errorf("the other origin was fetched: %q", got)
			}
			checkCallError(t, err, msgUnavailable, "redirect")
		})
	}
}

// TestRedirectWithinTheProviderIsFollowed checks that a redirect to the
// provider's own origin (a SearxNG behind a proxy that adds a trailing
// slash, an API that moved a path) is still followed, with the key.
func TestRedirectWithinTheProviderIsFollowed(t *testing.T) {
	for _, tc := range []struct {
		provider, file, header, want string
	}{
		{"searxng", "searxng.json", "", ""},
		{"brave", "brave.json", "X-Subscription-Token", "brave-key"},
		{"tavily", "tavily.json", "Authorization", "Bearer tavily-key"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			body := toolstest.Testdata(t, tc.file)
			var mu sync.Mutex
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.URL.Path, "/moved/") {
					http.Redirect(w, r, "/moved"+r.URL.RequestURI(), http.StatusPermanentRedirect)
					return
				}
				mu.Lock()
				got = append(got, r.Header.Get(tc.header))
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				w.Write(body)
			}))
			t.Cleanup(srv.Close)
			p := newTestProvider(t, tc.provider, srv.URL)
			rs, err := p.Search(context.Background(), Query{Text: "q", Count: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) == 0 {
				t.Error("no results after a redirect within the provider")
			}
			if len(got) != 1 || (tc.header != "" && got[0] != tc.want) {
				t.Errorf("the moved endpoint saw %q, want one request with %s %q", got, tc.header, tc.want)
			}
		})
	}
}

// TestRedirectLoopIsBounded checks that a provider redirecting to
// itself forever fails after a few hops.
func TestRedirectLoopIsBounded(t *testing.T) {
	var mu sync.Mutex
	hops := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hops++
		mu.Unlock()
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	p := newTestProvider(t, "searxng", srv.URL)
	_, err := p.Search(context.Background(), Query{Text: "q"})
	checkCallError(t, err, msgUnavailable, "redirect")
	mu.Lock()
	defer mu.Unlock()
	if hops > maxRedirects+1 {
		t.Errorf("%d requests, want at most %d", hops, maxRedirects+1)
	}
}

// TestGivenClientIsGuarded checks that a client passed in Config gets
// the same redirect rule, and that the caller's client is not changed.
func TestGivenClientIsGuarded(t *testing.T) {
	other := newElsewhere(t)
	srv := redirecting(t, http.StatusFound, other.URL)
	given := &http.Client{}
	p, err := FromConfig(Config{BraveKey: "brave-key", BraveURL: srv.URL + "/brave", Client: given})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Search(context.Background(), Query{Text: "q"})
	if got := other.requests(); len(got) > 0 {
		t.Errorf("the other origin was fetched: %q", got)
	}
	checkCallError(t, err, msgUnavailable, "redirect")
	if given.CheckRedirect != nil {
		t.Error("the caller's client was changed")
	}
}
