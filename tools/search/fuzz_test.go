package search

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/toolstest"
)

// checkParsed holds for the answer of any parser on any input: a failure
// is a *tools.CallError with one of the fixed messages, and what survives
// Normalize is bounded, plain, valid UTF-8 and pointing at distinct
// http(s) pages.
func checkParsed(t *testing.T, rs []Result, err error) {
	t.Helper()
	if err != nil {
		var ce *tools.CallError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v (%T) is not a *tools.CallError", err, err)
		}
		switch ce.Message {
		case msgBadAnswer, msgUnavailable:
		default:
			t.Fatalf("unexpected model message %q", ce.Message)
		}
		return
	}
	out := Normalize(rs, MaxResults)
	if len(out) > MaxResults {
		t.Fatalf("%d results", len(out))
	}
	seen := map[string]bool{}
	for _, r := range out {
		for _, s := range []string{r.Title, r.Snippet, r.URL} {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r\t\x00") {
				t.Fatalf("field %q is not one line of valid UTF-8", s)
			}
		}
		if n := utf8.RuneCountInString(r.Title); n == 0 || n > MaxTitleChars {
			t.Fatalf("title of %d characters: %q", n, r.Title)
		}
		if n := utf8.RuneCountInString(r.Snippet); n > MaxSnippetChars {
			t.Fatalf("snippet of %d characters", n)
		}
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("result URL %q is not an absolute http(s) URL", r.URL)
		}
		key, ok := CanonicalURL(r.URL)
		if !ok || seen[key] {
			t.Fatalf("URL %q: canonical %q ok=%v, seen before=%v", r.URL, key, ok, seen[key])
		}
		seen[key] = true
	}
}

func FuzzParseSearxNG(f *testing.F) {
	for _, name := range []string{"searxng.json", "searxng-empty.json", "searxng-engines-down.json"} {
		f.Add(toolstest.Testdata(f, name))
	}
	f.Add([]byte(`{"results":[{"url":"https://a.example/x?utm_source=1","title":"<b>A</b>","content":"x","publishedDate":"2024-01-02T03:04:05"},{"url":"HTTPS://A.example/x/","title":null}]}`))
	f.Add([]byte(`{"results":[{"url":7},{"url":"javascript:alert(1)"},"x",null,{"url":"http://[::1]:80/"}]}`))
	f.Add([]byte(`{"results":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rs, err := parseSearxNG(body)
		checkParsed(t, rs, err)
	})
}

func FuzzParseBrave(f *testing.F) {
	for _, name := range []string{"brave.json", "brave-error.json"} {
		f.Add(toolstest.Testdata(f, name))
	}
	f.Add([]byte(`{"type":"search","web":{"results":[{"url":"https://b.example","title":"a &lt;b&gt; <strong>c","description":"<em>d</em>","page_age":"2024-01-02T03:04:05","age":"2 days ago"}]}}`))
	f.Add([]byte(`{"type":"search"}`))
	f.Add([]byte(`{"web":{"results":[{"url":"https://x.example/` + strings.Repeat("é", 300) + `","title":"` + strings.Repeat("<i>t</i> ", 100) + `"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rs, err := parseBrave(body)
		checkParsed(t, rs, err)
	})
}

func FuzzParseTavily(f *testing.F) {
	f.Add(toolstest.Testdata(f, "tavily.json"))
	f.Add([]byte(`{"results":[{"url":"https://t.example","title":"","content":"c","published_date":"Thu, 02 Nov 2023 09:15:00 GMT"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rs, err := parseTavily(body)
		checkParsed(t, rs, err)
	})
}
