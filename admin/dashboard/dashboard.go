// Package dashboard holds the account dashboard, a static single-page
// application embedded in the binary, and the handler that serves it. The
// page talks only to the admin API (/admin/) of the same origin, so it needs
// nothing from any other host: no CDN, no web font, no analytics.
//
// Every response carries a Content-Security-Policy that allows scripts,
// styles and connections to this origin only and forbids inline script and
// style, so a value shown on the page (an account name, a key label, a file
// name) cannot run as code even if the page's own escaping had a hole.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of every dashboard response.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

// Assets are cached for a year under a path holding the content version,
// since a new build serves them under a new path; index.html, which names
// that path, is revalidated on every load.
const (
	immutable   = "public, max-age=31536000, immutable"
	revalidate  = "no-cache"
	assetsDir   = "assets/"
	versionSize = 12
)

type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the dashboard below a mount path such as "/dashboard/".
// It is safe for concurrent use.
type Handler struct {
	mount   string
	version string
	index   file
	assets  map[string]file // by name below assets/
	// notFoundHTML is the page a browser is shown for a path that is
	// neither a page nor a file.
	notFoundHTML []byte
}

// New returns a handler for requests whose path starts with mount, which
// must begin and end with a slash. A request for mount without its final
// slash is redirected to it, so that the page's relative URLs resolve.
func New(mount string) *Handler {
	if !strings.HasPrefix(mount, "/") || !strings.HasSuffix(mount, "/") {
		panic("dashboard: mount path must begin and end with /: " + mount)
	}
	h := &Handler{mount: mount, assets: make(map[string]file)}
	sum := sha256.New()
	var names []string
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		panic("dashboard: reading embedded files: " + err.Error())
	}
	sort.Strings(names)
	raw := make(map[string][]byte, len(names))
	for _, p := range names {
		b, err := static.ReadFile(p)
		if err != nil {
			panic("dashboard: reading embedded files: " + err.Error())
		}
		raw[p] = b
		sum.Write([]byte(p))
		sum.Write([]byte{0})
		sum.Write(b)
	}
	h.version = hex.EncodeToString(sum.Sum(nil))[:versionSize]
	for p, b := range raw {
		name := strings.TrimPrefix(p, "static/")
		if name == notFoundPage {
			// Served at any depth below the mount: its links are absolute.
			b = bytes.ReplaceAll(b, []byte(`="`+assetsDir), []byte(`="`+mount+assetsDir+h.version+"/"))
			b = bytes.ReplaceAll(b, []byte(`href="./"`), []byte(`href="`+mount+`"`))
			h.notFoundHTML = b
			continue
		}
		if name == "index.html" {
			// index.html names its assets as "assets/..."; serving them
			// under the version lets browsers keep them for good.
			b = bytes.ReplaceAll(b, []byte(`="`+assetsDir), []byte(`="`+assetsDir+h.version+"/"))
			h.index = newFile(name, b)
			continue
		}
		if rest, ok := strings.CutPrefix(name, assetsDir); ok {
			h.assets[rest] = newFile(name, b)
		}
	}
	if h.index.body == nil || h.notFoundHTML == nil {
		panic("dashboard: no embedded index.html or " + notFoundPage)
	}
	return h
}

func newFile(name string, b []byte) file {
	sum := sha256.Sum256(b)
	return file{body: b, contentType: contentType(name), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
}

// contentType is set from the extension alone: the host's MIME database
// plays no part, and nosniff makes browsers hold the server to it.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

// Version identifies the embedded files; it changes with any of them.
func (h *Handler) Version() string { return h.version }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", CSP)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")

	if r.URL.Path+"/" == h.mount {
		target := h.mount
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		hdr.Set("Cache-Control", revalidate)
		http.Redirect(w, r, target, http.StatusPermanentRedirect)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, h.mount)
	if !ok {
		h.notFound(w)
		return
	}
	f, cache, ok := h.lookup(name)
	if !ok && wantsPage(r, name) {
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.notFoundHTML)
		}
		return
	}
	if !ok {
		h.notFound(w)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		hdr.Set("Cache-Control", "no-store")
		apierror.Write(w, apierror.New(http.StatusMethodNotAllowed, apierror.TypeInvalidRequest,
			"method_not_allowed", "The dashboard's files can only be read (GET or HEAD)."))
		return
	}
	hdr.Set("Content-Type", f.contentType)
	hdr.Set("Cache-Control", cache)
	hdr.Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// lookup finds the file for a path below the mount and its caching.
func (h *Handler) lookup(name string) (file, string, bool) {
	if name == "" || name == "index.html" {
		return h.index, revalidate, true
	}
	rest, ok := strings.CutPrefix(name, assetsDir)
	if !ok {
		return file{}, "", false
	}
	if version, asset, ok := strings.Cut(rest, "/"); ok && len(version) == versionSize {
		f, ok := h.assets[asset]
		if version != h.version {
			// A page loaded before an upgrade asks for the old version:
			// it gets the current files, but only for this once.
			return f, revalidate, ok
		}
		return f, immutable, ok
	}
	f, ok := h.assets[rest]
	return f, revalidate, ok
}

// notFoundPage is the embedded page a browser gets for a missing page.
const notFoundPage = "404.html"

// wantsPage reports whether a request for a missing name is a browser
// navigating to a page, which is shown the not-found page; files and
// API-style clients get the JSON error envelope.
func wantsPage(r *http.Request, name string) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if strings.HasPrefix(name, assetsDir) || name == notFoundPage {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

func (h *Handler) notFound(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	apierror.Write(w, apierror.NotFound("No such dashboard page or file."))
}
