package dashboard

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestEveryResponseCarriesTheSecurityHeaders(t *testing.T) {
	h := New("/dashboard/")
	for _, p := range []string{"/dashboard/", "/dashboard", "/dashboard/assets/app.js", "/dashboard/missing", "/elsewhere"} {
		rec := get(t, h, "GET", p)
		if got := rec.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("%s: CSP %q", p, got)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", p)
		}
	}
}

func TestIndexNamesVersionedAssetsThatAreCachedForGood(t *testing.T) {
	h := New("/dashboard/")
	rec := get(t, h, "GET", "/dashboard/")
	if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-cache" || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("index: %d %v", rec.Code, rec.Header())
	}
	index := rec.Body.String()
	refs := regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`).FindAllStringSubmatch(index, -1)
	if len(refs) < 3 {
		t.Fatalf("index names %d assets: %s", len(refs), index)
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[1], "assets/"+h.Version()+"/") {
			t.Errorf("index names %s, not under the version %s", m[1], h.Version())
			continue
		}
		rec := get(t, h, "GET", "/dashboard/"+m[1])
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != immutable {
			t.Errorf("%s: %d, Cache-Control %q", m[1], rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
	// A page from before an upgrade gets today's files, revalidated.
	old := get(t, h, "GET", "/dashboard/assets/0123456789ab/app.js")
	if old.Code != 200 || old.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("old version: %d %q", old.Code, old.Header().Get("Cache-Control"))
	}
}

func TestConditionalRequestsAnswerNotModified(t *testing.T) {
	h := New("/dashboard/")
	first := get(t, h, "GET", "/dashboard/assets/style.css")
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" || first.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("style.css: %d %v", first.Code, first.Header())
	}
	if rec := get(t, h, "GET", "/dashboard/assets/style.css", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("with its ETag: %d, want 304", rec.Code)
	}
}

func TestRedirectsNotFoundAndMethods(t *testing.T) {
	h := New("/dashboard/")
	rec := get(t, h, "GET", "/dashboard?x=1")
	if rec.Code != http.StatusPermanentRedirect || rec.Header().Get("Location") != "/dashboard/?x=1" {
		t.Errorf("/dashboard: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/dashboard/nope.html", 404, `"not_found"`},
		{"GET", "/dashboard/assets/", 404, `"not_found"`},
		{"GET", "/dashboard/assets/" + h.Version() + "/nope.js", 404, `"not_found"`},
		{"GET", "/dashboard/static/index.html", 404, `"not_found"`},
		{"POST", "/dashboard/", 405, `"method_not_allowed"`},
		{"DELETE", "/dashboard/assets/app.js", 405, `"method_not_allowed"`},
	} {
		rec := get(t, h, tc.method, tc.path)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.code) || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, rec.Code, rec.Body.String())
		}
	}
	if rec := get(t, h, "HEAD", "/dashboard/"); rec.Code != 200 {
		t.Errorf("HEAD: %d", rec.Code)
	}
}

// The page must work with its CSP and without any other host: these
// checks catch the usual ways of breaking that before a browser does.
func TestAssetsNeedNoInlineCodeAndNoOtherHost(t *testing.T) {
	external := regexp.MustCompile(`(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`)
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := static.ReadFile(p)
		src := string(b)
		// The SVG namespace is a name, not a request.
		src = strings.ReplaceAll(src, "http://www.w3.org/2000/svg", "")
		if m := external.FindString(src); m != "" {
			t.Errorf("%s refers to another host: %s", p, m)
		}
		switch {
		case strings.HasSuffix(p, ".js"):
			for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('style'", "localStorage"} {
				if strings.Contains(src, banned) {
					t.Errorf("%s uses %s", p, banned)
				}
			}
		case strings.HasSuffix(p, ".html"):
			if regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=|<script(\s[^>]*)?>[^<\s]`).MatchString(src) {
				t.Errorf("%s has inline script, style or an event handler attribute", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMountMustBeADirectory(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted a mount without a final slash")
		}
	}()
	New("/dashboard")
}

// A browser that follows a stale or mistyped link to a page gets a page
// that says so and leads back, under the dashboard's CSP; files and API
// clients keep the JSON envelope.
func TestMissingPageIsAPage(t *testing.T) {
	h := New("/dashboard/")
	rec := get(t, h, "GET", "/dashboard/keys/old", "Accept", "text/html,application/xhtml+xml")
	body := rec.Body.String()
	if rec.Code != http.StatusNotFound || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if !strings.Contains(body, "Page not found") || !strings.Contains(body, `href="/dashboard/"`) ||
		!strings.Contains(body, `href="/dashboard/assets/`+h.Version()+`/style.css"`) {
		t.Errorf("page: %s", body)
	}
	if rec.Header().Get("Content-Security-Policy") != CSP {
		t.Error("the not-found page lacks the CSP")
	}
	rec = get(t, h, "GET", "/dashboard/assets/nope.js", "Accept", "text/html")
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("missing asset: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}
