package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// The code counted is that of the envelope that went out: a refusal
// that a writer in between answers with another envelope (as the client
// address guard swaps a 401 for a 429) counts the second's code, and an
// envelope written after the status counts none.
func TestStatusWriterCountsTheCodeWritten(t *testing.T) {
	sw := NewWriter(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/models", nil), nil)
	swap := &swappingWriter{ResponseWriter: sw}
	apierror.Write(swap, apierror.New(http.StatusUnauthorized, apierror.TypeInvalidRequest, "invalid_api_key", "Bad key."))
	if sw.status != http.StatusTooManyRequests || sw.code != "rate_limit_exceeded" {
		t.Errorf("counted %d %q, want 429 rate_limit_exceeded", sw.status, sw.code)
	}

	late := NewWriter(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/models", nil), nil)
	late.WriteHeader(http.StatusOK)
	apierror.Write(late, apierror.Internal())
	if late.code != "" {
		t.Errorf("an envelope after a 200 counted code %q", late.code)
	}
}

// swappingWriter answers a 401 with a 429 envelope of its own.
type swappingWriter struct {
	http.ResponseWriter
	swapped bool
}

func (w *swappingWriter) WriteHeader(status int) {
	if status != http.StatusUnauthorized {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.swapped = true
	apierror.Write(w.ResponseWriter, apierror.RateLimited("Too many failures.", 1))
}

func (w *swappingWriter) Write(p []byte) (int, error) {
	if w.swapped {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *swappingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
