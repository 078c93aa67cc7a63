package caddymodules

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Past limits' auth_failures, a client address is answered 429 before
// its key is looked up, a valid key included: the refusal that goes past
// the limit is answered 429 instead of 401. Requests that authenticate
// count nothing, and another address goes on being served. The block
// holds on every route that authenticates.
func TestAuthCountsRefusalsPerAddress(t *testing.T) {
	discardStderr(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[]}`)
	}))
	t.Cleanup(up.Close)
	example, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	plainPort := setV1BenchEnv(t, up.Listener.Addr().String())
	_, gateway := loadV1BenchConfig(t, string(example), "auth_failures 3 1m", up.Listener.Addr().String(), plainPort)
	key := fundedKey(t, "guarded")
	bad := "sk-" + strings.Repeat("Q1", 24)

	var get func(path, key, addr string) *httptest.ResponseRecorder
	models := func(key, addr string) *httptest.ResponseRecorder {
		t.Helper()
		return get("/v1/models", key, addr)
	}
	get = func(path, key, addr string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
		r.RemoteAddr = addr + ":40000"
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		gateway.ServeHTTP(w, r)
		return w
	}
	expect := func(what string, w *httptest.ResponseRecorder, status int, code string) {
		t.Helper()
		if w.Code != status || !strings.Contains(w.Body.String(), code) {
			t.Fatalf("%s: %d %s, want %d %s", what, w.Code, w.Body, status, code)
		}
	}
	for range 5 {
		expect("a valid key", models(key, "192.0.2.1"), http.StatusOK, `"list"`)
	}
	for range 3 {
		expect("a wrong key", models(bad, "192.0.2.1"), http.StatusUnauthorized, "invalid_api_key")
	}
	w := models(bad, "192.0.2.1")
	expect("the wrong key past the limit", w, http.StatusTooManyRequests, "rate_limit_exceeded")
	if w.Header().Get("Retry-After") == "" {
		t.Error("the refusal past the limit has no Retry-After")
	}
	expect("a valid key from the blocked address", models(key, "192.0.2.1"), http.StatusTooManyRequests, "rate_limit_exceeded")
	// The block is the address's on every route that authenticates, not
	// only on the one its refusals were counted on.
	for _, path := range []string{"/v3/models", "/v3/files", "/v3/nope"} {
		expect("a valid key from the blocked address on "+path, get(path, key, "192.0.2.1"), http.StatusTooManyRequests, "rate_limit_exceeded")
	}
	expect("a valid key from another address", models(key, "192.0.2.2"), http.StatusOK, `"list"`)
}
