// Package passthrough decides what of a /v1 request passes to the
// upstream, and what of its answer back to the client: the routes
// allowed, the request and response headers on the allow-lists, and the
// caller's key scrubbed from the query.
package passthrough

import (
	"net/http"
	"strings"
)

// routeAllowed matches a method and a path below the prefix against the
// allowed routes ("METHOD /path", a trailing "/*" matching one more
// segment or more).
func routeAllowed(routes []string, method, rest string) bool {
	for _, r := range routes {
		m, p, ok := strings.Cut(r, " ")
		if !ok || m != method {
			continue
		}
		if prefix, wild := strings.CutSuffix(p, "/*"); wild {
			if strings.HasPrefix(rest, prefix+"/") && len(rest) > len(prefix)+1 {
				return true
			}
			continue
		}
		if rest == p {
			return true
		}
	}
	return false
}

// Route normalises r's path below prefix and reports whether it is one
// of the allowed routes ("METHOD /path", a trailing "/*" matching one
// more segment or more). The prefix is matched without regard to case, as
// Caddy's path matcher does, and written back in its configured case so
// that the upstream rewrite always applies: a request can never leave
// the upstream's base path. Dot segments and encoded slashes are
// refused rather than interpreted.
func Route(r *http.Request, prefix string, routes []string) bool {
	p := r.URL.Path
	if len(p) < len(prefix) || !strings.EqualFold(p[:len(prefix)], prefix) {
		return false
	}
	rest := p[len(prefix):]
	if rest == "" || rest[0] != '/' || !isClean(rest) || strings.Contains(strings.ToLower(r.URL.RawPath), "%2f") {
		return false
	}
	if !routeAllowed(routes, r.Method, rest) {
		return false
	}
	if p[:len(prefix)] != prefix {
		r.URL.Path = prefix + rest
	}
	r.URL.RawPath = ""
	return true
}

// isClean reports whether path.Clean would leave p, which starts with a
// slash, as it is: p has no empty, "." or ".." segment and no slash at
// its end but the root's. It reads p once, where path.Clean would build
// its cleaned copy for every request to compare.
func isClean(p string) bool {
	if p == "/" {
		return true
	}
	for seg := p[1:]; ; {
		name, rest, more := strings.Cut(seg, "/")
		if name == "" || name == "." || name == ".." {
			return false
		}
		if !more {
			return true
		}
		seg = rest
	}
}
