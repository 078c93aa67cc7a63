package openurl

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
)

// maxURLBytes bounds the URL the model may pass; real links are far
// shorter, and the URL is echoed in messages.
const maxURLBytes = 4096

// checkURL parses raw and refuses what open_url never opens, before any
// name is resolved: other schemes, user information, hosts that are
// numbers in a non-standard form, and literal addresses the guard
// refuses. The fragment is dropped: it is never sent.
func checkURL(raw string, g Guard) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, tools.Failf("refused: the URL is empty")
	}
	if len(raw) > maxURLBytes {
		return nil, tools.Failf("refused: the URL is longer than %d bytes", maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, tools.Failf("refused: this is not a valid URL")
	}
	if err := checkParsed(u, g); err != nil {
		return nil, err
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// checkParsed applies the checks of checkURL to a parsed URL; redirects
// are checked with it too.
func checkParsed(u *url.URL, g Guard) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return tools.Failf("refused: the URL must be absolute, starting with http:// or https://")
	default:
		return tools.Failf("refused: only http and https URLs can be opened")
	}
	if u.Opaque != "" {
		return tools.Failf("refused: this is not a valid URL")
	}
	if u.User != nil {
		return tools.Failf("refused: URLs with a user name or password are not allowed")
	}
	host := u.Hostname()
	if host == "" {
		return tools.Failf("refused: the URL has no host")
	}
	port := uint16(80)
	if strings.EqualFold(u.Scheme, "https") {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return tools.Failf("refused: the port %q is not valid", p)
		}
		port = uint16(n)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return g.Allowed(netip.AddrPortFrom(a, port))
	}
	if numericHost(host) {
		// Browsers read 2130706433, 0177.0.0.1 and 0x7f.1 as 127.0.0.1,
		// and some C resolvers do too. Nothing legitimate is written so.
		return tools.Failf("refused: the host %s is a number that is not a standard IP address", host)
	}
	return nil
}

// numericHost reports whether the URL standard would read host as an
// IPv4 address: its last label (ignoring one trailing dot) is a decimal,
// octal or hexadecimal number.
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// normalizeLink returns the form in which two spellings of one link
// compare equal: scheme and host in lower case, no default port, "/" for
// an empty path, no fragment. ok is false for what is not an absolute
// http(s) URL.
func normalizeLink(raw string) (norm string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		host += ":" + p
	}
	u.Host = host
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	u.Fragment, u.RawFragment = "", ""
	u.ForceQuery = false
	return u.String(), true
}

// userGave reports whether u is one of the links.
func userGave(u *url.URL, links []string) bool {
	want, ok := normalizeLink(u.String())
	if !ok {
		return false
	}
	for _, l := range links {
		if n, ok := normalizeLink(l); ok && n == want {
			return true
		}
	}
	return false
}
