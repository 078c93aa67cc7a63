package passthrough

import (
	"net/url"
	"strings"
)

// Bearer is the credential of an Authorization header, whatever its
// scheme's letter case.
func Bearer(h string) string {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(cred)
}

// ScrubQuery removes from u's query every parameter whose name or value
// contains key, however it was escaped.
func ScrubQuery(u *url.URL, key string) {
	if !strings.Contains(u.RawQuery, key) {
		if q, err := url.QueryUnescape(u.RawQuery); err == nil && !strings.Contains(q, key) {
			return
		}
	}
	var kept []string
	for _, part := range strings.Split(u.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		n, _ := url.QueryUnescape(name)
		v, _ := url.QueryUnescape(value)
		if strings.Contains(part, key) || strings.Contains(n, key) || strings.Contains(v, key) {
			continue
		}
		kept = append(kept, part)
	}
	u.RawQuery = strings.Join(kept, "&")
}
