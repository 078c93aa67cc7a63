package idle

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The watch starts with the headers: a request whose answer has not
// begun is not cut, one that falls silent after its headers is, and one
// that finishes is left alone.
func TestWatch(t *testing.T) {
	const idle = 20 * time.Millisecond
	w, r := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), idle)
	time.Sleep(3 * idle)
	if r.Context().Err() != nil {
		t.Fatal("cut before the headers were sent")
	}
	w.WriteHeader(http.StatusOK)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a silent answer was not cut")
	}
	w.Stop()

	w, r = Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), time.Hour)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("data: {}\n\n"))
	if r.Context().Err() != nil {
		t.Fatal("an answer that is still talking was cut")
	}
	w.Stop()
}
