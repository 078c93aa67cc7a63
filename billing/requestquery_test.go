package billing

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A query string on a request of a method with a body is refused, and a
// bare "?" is sent on without it.
func TestCheckRequestQuery(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		refused        bool
	}{
		{"POST", "/v1/chat/completions?max_tokens=1", true},
		{"post", "/v1/embeddings?x", true},
		{"POST", "/v1/chat/completions?", false},
		{"POST", "/v1/chat/completions", false},
		{"GET", "/v1/models?limit=5", false},
	} {
		r := httptest.NewRequest(http.MethodGet, tt.target, nil)
		r.Method = tt.method
		err := CheckRequestQuery(r)
		if (err != nil) != tt.refused {
			t.Errorf("%s %s: %v, want refused %v", tt.method, tt.target, err, tt.refused)
		}
		if err == nil && tt.method != "GET" && strings.Contains(r.URL.String(), "?") {
			t.Errorf("%s %s goes upstream as %s", tt.method, tt.target, r.URL)
		}
	}
}
