package limits

import (
	"context"
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// FailureWriter watches the answer of an authentication for a client
// address: its refusal (a 401 written while refusal says so) counts a
// failure against the address, and the refusal that goes past the limit
// is answered 429 rate_limit_exceeded instead, its own body dropped.
// Other answers, such as an upstream's own 401 once the caller is
// authenticated, pass untouched.
type FailureWriter struct {
	http.ResponseWriter
	failures *AuthFailures
	ctx      context.Context
	addr     string
	refusal  func() bool     // a 401 written now is the authentication's
	onError  func(err error) // a failure that could not be counted
	swapped  bool            // the refusal was answered 429 instead: drop its body
}

// NewFailureWriter watches the answer written to w for the request of
// ctx from addr, counting its failures in f.
func NewFailureWriter(ctx context.Context, w http.ResponseWriter, f *AuthFailures, addr string,
	refusal func() bool, onError func(error)) *FailureWriter {
	return &FailureWriter{ResponseWriter: w, failures: f, ctx: ctx, addr: addr, refusal: refusal, onError: onError}
}

// WriteHeader counts a refusal, and swaps the one past the limit.
func (w *FailureWriter) WriteHeader(status int) {
	if status != http.StatusUnauthorized || w.swapped || !w.refusal() {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	// The client's context may be gone; the count must still land.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), 2*time.Second)
	defer cancel()
	wait, over, err := w.failures.Failed(ctx, w.addr)
	if err != nil {
		w.onError(err)
	}
	if !over {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.swapped = true
	h := w.Header()
	h.Del("WWW-Authenticate")
	apierror.Write(w.ResponseWriter, AuthFailuresError(w.failures, wait))
}

func (w *FailureWriter) Write(p []byte) (int, error) {
	if w.swapped {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *FailureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
