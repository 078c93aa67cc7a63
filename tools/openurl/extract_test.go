package openurl

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "spaces collapsed", in: "  A\n\ttitle  ", want: "A title"},
		{name: "long title cut", in: strings.Repeat("ab ", 200), want: strings.Repeat("ab ", 100)[:299] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneLine(tt.in); got != tt.want {
				t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExtractFallsBackToBody(t *testing.T) {
	u, _ := url.Parse("http://example.test/dir/file%0Aname")
	p := page{url: u, mediaType: "text/html", contentType: "text/html",
		body: []byte("<html><body><nav><a href=\"/\">x</a></nav><p>Short note.</p></body></html>")}
	ex, err := extract(context.Background(), newConverter(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ex.markdown, "Short note.") {
		t.Errorf("markdown = %q, want the body text", ex.markdown)
	}
	if ex.title != "file name" {
		t.Errorf("title = %q, want the path's last element on one line", ex.title)
	}
}

// FuzzExtract feeds arbitrary bodies through the HTML and text paths:
// no panic, UTF-8 out, a one-line title, no inline base64 images.
func FuzzExtract(f *testing.F) {
	f.Add([]byte("<html><head><title>T</title></head><body><p>Hello <a href='/x'>link</a></p></body></html>"), true)
	f.Add([]byte("<p>caf\xe9</p><img src='data:image/png;base64,AAAA'>"), true)
	f.Add([]byte("<table><tr><td>1<td>2</table><ul><li>a<li>b</ul><pre>code</pre>"), true)
	f.Add([]byte("<svg><script>alert(1)</script></svg><title>\n\n</title>"), true)
	f.Add([]byte("plain\r\n\r\n\r\ntext \xff"), false)
	u, _ := url.Parse("http://example.test/page")
	conv := newConverter()
	f.Fuzz(func(t *testing.T, body []byte, isHTML bool) {
		p := page{url: u, mediaType: "text/plain", contentType: "text/plain", body: body}
		if isHTML {
			p.mediaType, p.contentType = "text/html", "text/html"
		}
		ex, err := extract(context.Background(), conv, p)
		if err != nil {
			return
		}
		if !utf8.ValidString(ex.markdown) || !utf8.ValidString(ex.title) {
			t.Fatal("output is not valid UTF-8")
		}
		if ex.title == "" || strings.ContainsAny(ex.title, "\r\n") || utf8.RuneCountInString(ex.title) > maxTitleChars+1 {
			t.Fatalf("title %q is empty, spans lines or is too long", ex.title)
		}
		if isHTML && strings.Contains(ex.markdown, "](data:") {
			t.Fatalf("inline data image kept: %q", ex.markdown)
		}
	})
}
