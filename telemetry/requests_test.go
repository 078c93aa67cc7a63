package telemetry

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RouteOf names a path's route as Caddy's path matchers, which lower
// the path, see it.
func TestRouteOfIgnoresLetterCaseAsCaddyDoes(t *testing.T) {
	lowered := func(path string) string {
		p := strings.ToLower(path)
		switch {
		case p == "/v1" || strings.HasPrefix(p, "/v1/"):
			return RouteV1
		case p == "/v3/chat/completions", p == "/v3/responses":
			return RouteV3Chat
		case p == "/v3/files" || strings.HasPrefix(p, "/v3/files/"):
			return RouteV3Files
		}
		return RouteOther
	}
	for _, path := range []string{
		"/v1", "/V1", "/v1/", "/V1/Chat/Completions", "/v1x", "/v10/models", "/v",
		"/v3/chat/completions", "/V3/CHAT/COMPLETIONS", "/v3/chat/completions/", "/v3/responses", "/v3/Responses",
		"/v3/files", "/v3/FILES/file-1", "/v3/filesx", "/v3/fileſ", "/v3/fİles", "/\u212a1", "/v3/files\xff",
		"", "/", "/v2/models", "/dashboard",
	} {
		if got, want := RouteOf(path), lowered(path); got != want {
			t.Errorf("RouteOf(%q) = %s, want %s", path, got, want)
		}
	}
}

// A stream is counted in flight from its headers to its count, and its
// first byte is timed from the request's start.
func TestStreamInFlightAndItsFirstByte(t *testing.T) {
	m, err := New().Register(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/v3/chat/completions", nil)
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "Text/Event-Stream; charset=utf-8")
	w := NewWriter(rec, r, m)
	if !w.FirstByte().IsZero() {
		t.Error("a first byte before any was written")
	}
	w.WriteHeader(http.StatusOK)
	if got := value(t, m.streams.WithLabelValues(RouteV3Chat)); got != 1 {
		t.Errorf("%v streams in flight, want 1", got)
	}
	time.Sleep(time.Millisecond)
	_, _ = w.Write([]byte("data: {}\n\n"))
	if fb := w.FirstByte(); fb.Sub(w.Start()) < time.Millisecond || time.Since(fb) < 0 {
		t.Errorf("first byte at %v, %v after the start", fb, fb.Sub(w.Start()))
	}
	m.CountRequest(r, w, http.StatusOK, CodeNone, "")
	if got := value(t, m.streams.WithLabelValues(RouteV3Chat)); got != 0 {
		t.Errorf("%v streams in flight after the count, want 0", got)
	}
	if got := value(t, m.firstByte.WithLabelValues(RouteV3Chat, modelNone).(prometheus.Metric)); got != 1 {
		t.Errorf("%v first bytes observed, want 1", got)
	}
}
