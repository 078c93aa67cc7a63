package idle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkWatch is the watch of one answer of known length: started,
// its headers and body written, stopped. The request's context is
// cancellable, as net/http's own for a request is.
func BenchmarkWatch(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil).WithContext(parent)
	rec := httptest.NewRecorder()
	body := []byte(`{"ok":true}`)
	var iw Writer
	b.ReportAllocs()
	for b.Loop() {
		wr := iw.Start(rec, r, time.Minute)
		_ = wr
		iw.WriteHeader(http.StatusOK)
		_, _ = iw.Write(body)
		iw.Stop()
	}
}

// BenchmarkWatchStream is the watch of a stream of 20 chunks, each
// written and flushed.
func BenchmarkWatchStream(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil).WithContext(parent)
	rec := httptest.NewRecorder()
	chunk := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
	var iw Writer
	b.ReportAllocs()
	for b.Loop() {
		_ = iw.Start(rec, r, time.Minute)
		iw.WriteHeader(http.StatusOK)
		for range 20 {
			_, _ = iw.Write(chunk)
			iw.Flush()
		}
		rec.Body.Reset()
		iw.Stop()
	}
}
