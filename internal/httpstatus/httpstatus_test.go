package httpstatus

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEnvelope(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/v9/"+strings.Repeat("x", 200), nil)
	tests := []struct {
		status, wantStatus int
		wantCode           string
	}{
		{http.StatusNotFound, http.StatusNotFound, "route_not_found"},
		{http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.StatusRequestEntityTooLarge, http.StatusRequestEntityTooLarge, "request_too_large"},
		{http.StatusGatewayTimeout, http.StatusBadGateway, "upstream_unavailable"},
		{http.StatusServiceUnavailable, http.StatusServiceUnavailable, "service_unavailable"},
		{http.StatusInsufficientStorage, http.StatusInsufficientStorage, "internal_error"},
		{http.StatusTeapot, http.StatusTeapot, "invalid_request"},
	}
	for _, tt := range tests {
		e := Envelope(tt.status, r)
		if e.Status != tt.wantStatus || e.Code != tt.wantCode {
			t.Errorf("Envelope(%d) = %d %q, want %d %q", tt.status, e.Status, e.Code, tt.wantStatus, tt.wantCode)
		}
	}
	// The path a client sent is quoted, but not at any length.
	if msg := NotServed(r).Message; len(msg) > 150 || !strings.HasPrefix(msg, "This gateway does not serve GET /v9/") {
		t.Errorf("NotServed message %q", msg)
	}
}

func TestAllowOnly(t *testing.T) {
	w := httptest.NewRecorder()
	if !AllowOnly(http.MethodPost, w, httptest.NewRequest(http.MethodPost, "/v3/chat/completions", nil)) || w.Code != http.StatusOK {
		t.Fatalf("POST refused: %d", w.Code)
	}
	w = httptest.NewRecorder()
	if AllowOnly(http.MethodPost, w, httptest.NewRequest(http.MethodGet, "/v3/chat/completions", nil)) {
		t.Fatal("GET allowed")
	}
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost || !strings.Contains(w.Body.String(), "method_not_allowed") {
		t.Errorf("got %d, Allow %q, body %s", w.Code, w.Header().Get("Allow"), w.Body)
	}
}
