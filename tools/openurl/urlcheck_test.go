package openurl

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestNormalizeLink(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" means not a link
	}{
		{name: "already normal", in: "https://example.com/a?b=c", want: "https://example.com/a?b=c"},
		{name: "case of scheme and host", in: "HTTPS://Example.COM/Path", want: "https://example.com/Path"},
		{name: "default port", in: "http://example.com:80/x", want: "http://example.com/x"},
		{name: "default https port", in: "https://example.com:443", want: "https://example.com/"},
		{name: "other port kept", in: "https://example.com:8443/", want: "https://example.com:8443/"},
		{name: "fragment dropped", in: "https://example.com/a#b", want: "https://example.com/a"},
		{name: "trailing dot", in: "https://example.com./a", want: "https://example.com/a"},
		{name: "IPv6", in: "http://[2001:DB8::1]:80/", want: "http://[2001:db8::1]/"},
		{name: "empty query mark", in: "https://example.com/a?", want: "https://example.com/a"},
		{name: "not http", in: "ftp://example.com/"},
		{name: "relative", in: "/a/b"},
		{name: "invalid", in: "http://exa mple.com/%zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := normalizeLink(tt.in)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("normalizeLink(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
			}
		})
	}
}

func TestNumericHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"2130706433", true}, {"0177.0.0.1", true}, {"0x7f.0.0.1", true}, {"127.1", true},
		{"0x7F000001", true}, {"1.2.3.4.", true}, {"0x", true},
		{"example.com", false}, {"1.2.3.com", false}, {"0xzz", false}, {"123abc", false}, {"a.b.", false},
	}
	for _, tt := range tests {
		if got := numericHost(tt.host); got != tt.want {
			t.Errorf("numericHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // substring of the refusal; "" means accepted
	}{
		{name: "https", in: " https://example.com/a#frag "},
		{name: "explicit public port refused early", in: "http://93.184.215.14:8080/", want: "port 8080 is not allowed"},
		{name: "name with odd port passes to the dial check", in: "http://example.com:8080/"},
		{name: "port zero", in: "http://example.com:0/", want: "port \"0\" is not valid"},
		{name: "huge port", in: "http://example.com:70000/", want: "is not valid"},
		{name: "javascript", in: "javascript:alert(1)", want: "only http and https"},
		{name: "data", in: "data:text/html,hi", want: "only http and https"},
		{name: "no host", in: "http:///path", want: "no host"},
		{name: "opaque", in: "http:example.com", want: "not a valid URL"},
		{name: "too long", in: "https://example.com/" + strings.Repeat("a", maxURLBytes), want: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := checkURL(tt.in, Guard{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("checkURL(%q) = %v", tt.in, err)
				}
				if u.Fragment != "" {
					t.Errorf("fragment %q kept", u.Fragment)
				}
				return
			}
			wantCallError(t, err, tt.want)
		})
	}
}

// TestExtractWithinReturnsAtDeadline: a page whose extraction outlasts
// the time limit ends the call at the limit, with a message for the
// model.
func TestExtractWithinReturnsAtDeadline(t *testing.T) {
	body := strings.Repeat("<div><p>Paragraph <a href='/x'>link</a> text.</p></div>\n", 40000)
	u, _ := url.Parse("http://example.test/")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errFetchTimeout)
	_, err := New(Options{}).extractWithin(ctx, page{url: u, mediaType: "text/html", contentType: "text/html", body: []byte(body)})
	if !errors.Is(err, errFetchTimeout) {
		t.Errorf("error = %v, want the time limit", err)
	}
}
