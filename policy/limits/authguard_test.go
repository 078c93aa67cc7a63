package limits

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Refusals count against the address; the one past the limit is answered
// 429 with its own body dropped; a 401 that is not a refusal passes and
// counts nothing.
func TestFailureWriter(t *testing.T) {
	clock := newFakeClock()
	l := NewLocal(LocalConfig{Now: clock.Now})
	f, err := NewAuthFailures(AuthFailuresConfig{Limiter: l, Rate: Rate{Limit: 2, Period: time.Minute}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(refusal bool) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		w := NewFailureWriter(context.Background(), rec, f, "203.0.113.7", func() bool { return refusal }, func(err error) { t.Error(err) })
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"invalid_api_key"}}`))
		return rec
	}
	for i := range 3 {
		if rec := answer(false); rec.Code != http.StatusUnauthorized {
			t.Fatalf("a 401 after authentication, %d: answered %d", i, rec.Code)
		}
	}
	for i := range 2 {
		if rec := answer(true); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "invalid_api_key") {
			t.Fatalf("refusal %d within the limit: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := answer(true)
	if rec.Code != http.StatusTooManyRequests || strings.Contains(rec.Body.String(), "invalid_api_key") || rec.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("the refusal past the limit: %d %v %s; want a 429 alone", rec.Code, rec.Header(), rec.Body)
	}
}
