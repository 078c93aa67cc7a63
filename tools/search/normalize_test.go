package search

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	date := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		in    []Result
		limit int
		want  []Result
	}{
		{
			name: "strips tags, decodes entities, collapses whitespace",
			in: []Result{{Title: " <strong>Caddy</strong>\n docs ", URL: "https://caddyserver.com/docs",
				Snippet: "Health <b>checks</b> &amp; load\tbalancing<br>and more", Published: date}},
			want: []Result{{Title: "Caddy docs", URL: "https://caddyserver.com/docs",
				Snippet: "Health checks & load balancing and more", Published: date}},
		},
		{
			name: "keeps a less-than sign in prose",
			in:   []Result{{Title: "a < b and c<3", URL: "https://example.com/"}},
			want: []Result{{Title: "a < b and c<3", URL: "https://example.com/"}},
		},
		{
			name: "drops an unclosed tag cut by the provider",
			in:   []Result{{Title: "Title", URL: "https://example.com/", Snippet: "text <a href=\"https://exa"}},
			want: []Result{{Title: "Title", URL: "https://example.com/", Snippet: "text"}},
		},
		{
			name: "drops results without an http(s) URL",
			in: []Result{
				{Title: "ftp", URL: "ftp://example.com/file"},
				{Title: "relative", URL: "/docs/page"},
				{Title: "js", URL: "javascript:alert(1)"},
				{Title: "magnet", URL: "magnet:?xt=urn:btih:abc"},
				{Title: "empty", URL: ""},
				{Title: "no host", URL: "https:///path"},
				{Title: "credentials", URL: "https://user:pw@example.com/"},
				{Title: "bad escape", URL: "https://example.com/%zz"},
				{Title: "ok", URL: "HTTPS://Example.com/ok"},
			},
			want: []Result{{Title: "ok", URL: "https://Example.com/ok"}},
		},
		{
			name: "deduplicates by canonical URL and keeps the first",
			in: []Result{
				{Title: "first", URL: "https://example.com/a/?utm_source=x&id=1"},
				{Title: "same, tracking and fragment", URL: "HTTPS://EXAMPLE.com:443/a?id=1&fbclid=abc#top"},
				{Title: "same, no slash", URL: "https://example.com/a?gclid=1&id=1"},
				{Title: "other query", URL: "https://example.com/a?id=2"},
				{Title: "other scheme", URL: "http://example.com/a?id=1"},
				{Title: "path case matters", URL: "https://example.com/A?id=1"},
			},
			want: []Result{
				{Title: "first", URL: "https://example.com/a/?id=1"},
				{Title: "other query", URL: "https://example.com/a?id=2"},
				{Title: "other scheme", URL: "http://example.com/a?id=1"},
				{Title: "path case matters", URL: "https://example.com/A?id=1"},
			},
		},
		{
			name: "titles an untitled result by its host",
			in:   []Result{{Title: " <b></b> ", URL: "https://docs.example.org/x"}},
			want: []Result{{Title: "docs.example.org", URL: "https://docs.example.org/x"}},
		},
		{
			name:  "bounds the count after dropping",
			in:    []Result{{URL: "ftp://x"}, {Title: "1", URL: "https://a.example"}, {Title: "dup", URL: "https://a.example/"}, {Title: "2", URL: "https://b.example"}, {Title: "3", URL: "https://c.example"}},
			limit: 2,
			want:  []Result{{Title: "1", URL: "https://a.example"}, {Title: "2", URL: "https://b.example"}},
		},
		{
			name: "nothing in, nothing out",
			in:   nil,
			want: []Result{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Normalize(tc.in, tc.limit)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Normalize (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeBoundsLengths(t *testing.T) {
	long := strings.Repeat("été ", 400) // multi-byte runes, so a byte cut would split one
	got := Normalize([]Result{{Title: long, URL: "https://example.com", Snippet: long}}, 0)
	if len(got) != 1 {
		t.Fatalf("got %d results", len(got))
	}
	for _, f := range []struct {
		name  string
		s     string
		limit int
	}{{"title", got[0].Title, MaxTitleChars}, {"snippet", got[0].Snippet, MaxSnippetChars}} {
		if n := utf8.RuneCountInString(f.s); n > f.limit || n < f.limit-30 {
			t.Errorf("%s has %d characters, want at most %d and not much fewer", f.name, n, f.limit)
		}
		if !utf8.ValidString(f.s) || !strings.HasSuffix(f.s, "…") {
			t.Errorf("%s %q: want valid UTF-8 ending in an ellipsis", f.name, f.s[len(f.s)-20:])
		}
		if strings.HasSuffix(f.s, " …") || strings.HasSuffix(strings.TrimSuffix(f.s, "…"), "ét") {
			t.Errorf("%s cut inside a word or before a space: %q", f.name, f.s[len(f.s)-20:])
		}
	}
}

func TestTruncate(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{name: "short enough", in: "hello", limit: 5, want: "hello"},
		{name: "cuts at a word boundary", in: "hello wonderful world", limit: 12, want: "hello…"},
		{name: "cuts a long word at a rune boundary", in: "ééééééé", limit: 4, want: "ééé…"},
		{name: "drops trailing punctuation", in: "one, two, three", limit: 6, want: "one…"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := truncate(tc.in, tc.limit); got != tc.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
		})
	}
}

func TestCanonicalURL(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{name: "lowercases scheme and host", in: "HTTPS://WWW.Example.COM/Path", want: "https://www.example.com/Path", ok: true},
		{name: "drops default http port", in: "http://example.com:80/a", want: "http://example.com/a", ok: true},
		{name: "keeps other ports", in: "https://example.com:8443/a", want: "https://example.com:8443/a", ok: true},
		{name: "drops trailing slash and fragment", in: "https://example.com/a/b/#s", want: "https://example.com/a/b", ok: true},
		{name: "root", in: "https://example.com/", want: "https://example.com", ok: true},
		{name: "drops tracking parameters in any case", in: "https://e.com/?UTM_Campaign=x&q=1&mc_eid=2&msclkid=3", want: "https://e.com?q=1", ok: true},
		{name: "keeps parameter order", in: "https://e.com/s?b=2&a=1", want: "https://e.com/s?b=2&a=1", ok: true},
		{name: "IPv6 host", in: "http://[::1]:80/x", want: "http://[::1]/x", ok: true},
		{name: "not web", in: "mailto:a@example.com", ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := CanonicalURL(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("CanonicalURL(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // RFC 3339, "" for the zero time
	}{
		{name: "python isoformat, naive", in: "2023-11-02T00:00:00", want: "2023-11-02T00:00:00Z"},
		{name: "python isoformat, microseconds and zone", in: "2024-03-18T09:41:12.337000+00:00", want: "2024-03-18T09:41:12.337Z"},
		{name: "keeps the publisher's zone", in: "2024-03-18T00:30:00+02:00", want: "2024-03-18T00:30:00+02:00"},
		{name: "space separator", in: "2024-03-18 09:41:12", want: "2024-03-18T09:41:12Z"},
		{name: "bare date", in: "2024-03-18", want: "2024-03-18T00:00:00Z"},
		{name: "RFC 1123", in: "Thu, 02 Nov 2023 09:15:00 GMT", want: "2023-11-02T09:15:00Z"},
		{name: "Brave display age", in: "June 11, 2024", want: "2024-06-11T00:00:00Z"},
		{name: "relative age is unknown", in: "2 days ago", want: ""},
		{name: "placeholder year", in: "0001-01-01T00:00:00", want: ""},
		{name: "empty", in: "", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseDate(tc.in)
			s := ""
			if !got.IsZero() {
				s = got.Format(time.RFC3339Nano)
			}
			if s != tc.want {
				t.Errorf("parseDate(%q) = %q, want %q", tc.in, s, tc.want)
			}
		})
	}
}

func BenchmarkNormalize(b *testing.B) {
	in := make([]Result, 30)
	for i := range in {
		in[i] = Result{
			Title:   "<strong>Result</strong> number " + strings.Repeat("x", i),
			URL:     "https://example.com/page/" + strings.Repeat("p", i%7) + "?utm_source=a&id=1",
			Snippet: strings.Repeat("Some <b>snippet</b> text &amp; more. ", 12),
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Normalize(in, DefaultMaxResults)
	}
}
