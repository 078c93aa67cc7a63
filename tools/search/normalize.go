package search

import (
	"html"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// Bounds of a normalised result, in characters (runes).
const (
	MaxTitleChars   = 200
	MaxSnippetChars = 500
	// maxURLBytes drops URLs no citation should carry; browsers and
	// servers commonly stop at about 2 KB as well.
	maxURLBytes = 2048
)

// Normalize returns at most limit results from rs, in their order, with
// titles and snippets as plain text of bounded length. Results without
// an absolute http(s) URL are dropped, and so are later results whose
// canonical URL (see CanonicalURL) repeats an earlier one. A result
// without a title is titled by its host. limit <= 0 means no bound.
func Normalize(rs []Result, limit int) []Result {
	n := len(rs)
	if limit > 0 {
		n = min(n, limit)
	}
	out := make([]Result, 0, n)
	seen := make(map[string]bool, n)
	for _, r := range rs {
		if len(out) == n {
			break
		}
		u, ok := webURL(r.URL)
		if !ok {
			continue
		}
		key := canonical(u)
		if seen[key] {
			continue
		}
		seen[key] = true
		title := truncate(plainText(r.Title), MaxTitleChars)
		if title == "" {
			title = truncate(u.Hostname(), MaxTitleChars)
		}
		out = append(out, Result{
			Title:     title,
			URL:       u.String(),
			Snippet:   truncate(plainText(r.Snippet), MaxSnippetChars),
			Published: r.Published,
		})
	}
	return out
}

// webURL parses s as a URL a citation may point to: absolute, http or
// https, with a host and without credentials. Tracking parameters are
// removed; everything else is kept as the provider wrote it.
func webURL(s string) (*url.URL, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxURLBytes || !utf8.ValidString(s) {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, false
	}
	if !validHost(u.Hostname()) {
		return nil, false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return nil, false
	}
	u.RawQuery = dropTracking(u.RawQuery)
	u.ForceQuery = false
	// The bound holds for the URL as written out, escapes included, so
	// that what Normalize returns passes webURL again.
	if len(u.String()) > maxURLBytes {
		return nil, false
	}
	return u, true
}

// validHost accepts names (internationalised ones too) and IP literals.
// url.Parse is more lenient: it unescapes "%80" to an invalid byte and
// lets "<", "&" and the like through, none of which names a web server.
func validHost(h string) bool {
	if h == "" || !utf8.ValidString(h) {
		return false
	}
	for _, r := range h {
		ok := r == '-' || r == '.' || r == '_' || r == ':' || r == '%' ||
			(r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)))
		if !ok {
			return false
		}
	}
	return true
}

// CanonicalURL returns the key under which results count as the same
// page: scheme and host lowercased, default port, fragment, trailing
// slash and tracking parameters (utm_*, fbclid, gclid and the like)
// dropped. It reports false for what Normalize would drop.
func CanonicalURL(s string) (string, bool) {
	u, ok := webURL(s)
	if !ok {
		return "", false
	}
	return canonical(u), true
}

func canonical(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	key := scheme + "://" + host + path
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return key
}

// dropTracking removes tracking parameters from a raw query, keeping the
// others in their order and encoding.
func dropTracking(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, p := range parts {
		if p == "" {
			continue
		}
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if isTracking(strings.ToLower(name)) {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}

func isTracking(name string) bool {
	if strings.HasPrefix(name, "utm_") {
		return true
	}
	switch name {
	case "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid":
		return true
	}
	return false
}

// plainText turns a provider's title or snippet into one line of plain
// text: tags removed, entities decoded, whitespace and control characters
// collapsed to single spaces, invalid UTF-8 dropped. Brave, for one,
// marks query words with <strong>.
func plainText(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = html.UnescapeString(stripTags(s))
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError
	}), " ")
}

// stripTags removes what looks like markup: "<" followed by a letter,
// "/", "!" or "?", up to the next ">". A "<" in prose ("a < b") stays.
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 || i+1 >= len(s) {
			b.WriteString(s)
			return b.String()
		}
		c := s[i+1]
		if !(c == '/' || c == '!' || c == '?' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			// An unclosed tag at the end was cut by the provider.
			b.WriteString(s[:i])
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteByte(' ') // "<br>" and "</p><p>" separate words
		s = s[i+j+1:]
	}
}

// truncate bounds s to limit runes. A cut string ends with "…" and, when a
// word boundary is near, is cut there rather than inside a word.
func truncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	// One rune less, to leave room for the ellipsis.
	head := clip.Runes(s, limit-1)
	if s[len(head)] != ' ' { // the cut falls inside a word
		if sp := strings.LastIndexByte(head, ' '); sp > 0 && utf8.RuneCountInString(head[sp:]) <= 30 {
			head = head[:sp]
		}
	}
	return strings.TrimRight(head, " ,;:.-") + "…"
}
