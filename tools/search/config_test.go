package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

func TestFromConfig(t *testing.T) {
	cases := []struct {
		name    string
		config  Config
		want    string // provider type, "" for none
		wantErr string
	}{
		{name: "nothing configured offers no tool", config: Config{}},
		{name: "endpoint overrides alone configure nothing", config: Config{BraveURL: "http://127.0.0.1:1/x", TavilyURL: "http://127.0.0.1:1/y"}},
		{name: "searxng", config: Config{SearxNGURL: "http://127.0.0.1:8888"}, want: "*search.SearxNG"},
		{name: "searxng under a path", config: Config{SearxNGURL: "https://search.example.org/searxng/"}, want: "*search.SearxNG"},
		{name: "brave", config: Config{BraveKey: "k"}, want: "*search.Brave"},
		{name: "tavily", config: Config{TavilyKey: "k"}, want: "*search.Tavily"},
		{name: "several are chained", config: Config{SearxNGURL: "http://127.0.0.1:8888", BraveKey: "k"}, want: "search.fallback"},
		{name: "relative searxng URL", config: Config{SearxNGURL: "searx.local:8888"}, wantErr: "want an absolute http or https URL"},
		{name: "searxng URL without scheme", config: Config{SearxNGURL: "//searx.local"}, wantErr: "want an absolute http or https URL"},
		{name: "searxng URL of another scheme", config: Config{SearxNGURL: "ftp://searx.local"}, wantErr: "want an absolute http or https URL"},
		{name: "searxng URL with a query", config: Config{SearxNGURL: "http://searx.local/?format=json"}, wantErr: "without query"},
		{name: "searxng URL that does not parse", config: Config{SearxNGURL: "http://searx.local/%zz"}, wantErr: "SearxNG URL"},
		{name: "searxng password is not echoed", config: Config{SearxNGURL: "gopher://u:hunter2@searx.local"}, wantErr: "xxxxx"},
		{name: "bad brave endpoint", config: Config{BraveKey: "k", BraveURL: "api.search.brave.com"}, wantErr: "Brave URL"},
		{name: "blank brave key", config: Config{BraveKey: "   "}, wantErr: "empty API key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FromConfig(tc.config)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if p != nil {
				got = fmt.Sprintf("%T", p)
			}
			if got != tc.want {
				t.Errorf("provider %s, want %s", got, tc.want)
			}
		})
	}
}

type stubProvider struct {
	results []Result
	err     error
	calls   int
}

func (s *stubProvider) Search(context.Context, Query) ([]Result, error) {
	s.calls++
	return s.results, s.err
}

func TestFallback(t *testing.T) {
	down := &tools.CallError{Message: msgUnavailable, Err: errors.New("first down")}
	limited := &tools.CallError{Message: msgRateLimited, Err: errors.New("second limited")}
	ok := []Result{{Title: "ok", URL: "https://example.com"}}

	t.Run("the first answer wins", func(t *testing.T) {
		a, b := &stubProvider{results: ok}, &stubProvider{results: ok}
		rs, err := fallback{a, b}.Search(context.Background(), Query{Text: "q"})
		if err != nil || len(rs) != 1 || a.calls != 1 || b.calls != 0 {
			t.Errorf("results %v, err %v, calls %d/%d", rs, err, a.calls, b.calls)
		}
	})
	t.Run("a failure goes to the next", func(t *testing.T) {
		a, b := &stubProvider{err: down}, &stubProvider{results: ok}
		rs, err := fallback{a, b}.Search(context.Background(), Query{Text: "q"})
		if err != nil || len(rs) != 1 || b.calls != 1 {
			t.Errorf("results %v, err %v", rs, err)
		}
	})
	t.Run("when all fail the model reads the last message and the log gets all", func(t *testing.T) {
		a, b := &stubProvider{err: down}, &stubProvider{err: limited}
		_, err := fallback{a, b}.Search(context.Background(), Query{Text: "q"})
		if tools.ModelMessage(err) != "error: "+msgRateLimited || !strings.Contains(err.Error(), "first down") || !strings.Contains(err.Error(), "second limited") {
			t.Errorf("error %q, model reads %q", err, tools.ModelMessage(err))
		}
	})
	t.Run("a finished context stops the chain", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		a, b := &stubProvider{err: down}, &stubProvider{results: ok}
		if _, err := (fallback{a, b}).Search(ctx, Query{Text: "q"}); err == nil || b.calls != 0 {
			t.Errorf("err %v, second provider called %d times", err, b.calls)
		}
	})
}
