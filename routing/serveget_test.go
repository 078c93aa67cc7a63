package routing

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServeGet(t *testing.T) {
	var tbl Table[fakePool]
	tbl.Add(fakePool{name: "local"}, nil)
	tests := []struct {
		rest     string
		status   int
		contains string
	}{
		{"/models", http.StatusOK, `"local"`},
		{"/models/local", http.StatusOK, `"id":"local"`},
		{"/models/other", http.StatusNotFound, "model_not_found"},
		{"/files", http.StatusBadRequest, "picks a backend by the request's model"},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		ServeGet(w, tt.rest, &tbl, 1700000000)
		if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.contains) {
			t.Errorf("GET %s: %d %s; want %d with %q", tt.rest, w.Code, w.Body, tt.status, tt.contains)
		}
	}
}
