// Package idle bounds the silence of an answer being written: past it,
// the request's context is cancelled.
package idle

import (
	"context"
	"net/http"
	"time"
)

// Watch bounds the silence of a proxied answer once its headers are
// sent: when nothing more has been written to the client for idle, the
// request's context is cancelled, which makes the reverse proxy give up
// on the upstream and cut the stream. Before the headers the transport's
// response_header_timeout applies, which answers 502 in the envelope; a
// cancelled context there would look like a client that left. It does
// what the transport's read_timeout would, without its per-read deadline
// calls, which log an error for every stream a client leaves.
//
// The answer goes to the returned writer, and Stop ends the watch once
// the answer is done.
func Watch(w http.ResponseWriter, r *http.Request, idle time.Duration) (*Writer, *http.Request) {
	iw := new(Writer)
	return iw, iw.Start(w, r, idle)
}

// Start makes iw the writer Watch returns, and returns the request
// watched, in place: for a caller that keeps the writer in a value of
// its own.
func (iw *Writer) Start(w http.ResponseWriter, r *http.Request, idle time.Duration) *http.Request {
	ctx, cancel := context.WithCancel(r.Context())
	*iw = Writer{ResponseWriter: w, alarm: takeAlarm(cancel, idle), cancel: cancel}
	return r.WithContext(ctx)
}

// Writer is an answer under an idle watch (Watch).
type Writer struct {
	http.ResponseWriter
	alarm  *alarm // armed by the headers; nil once stopped
	cancel context.CancelFunc
}

// Stop ends the watch, and cancels the context of the request watched.
// It is a method, where a closure of the two would be an allocation a
// request.
func (w *Writer) Stop() {
	if w.alarm != nil {
		w.alarm.release()
		w.alarm = nil
	}
	w.cancel()
}

// rearm starts the silence allowed anew: the first write arms the
// alarm, the others note their time. After Stop the alarm may be
// another watch's, and is not touched.
func (w *Writer) rearm() {
	switch a := w.alarm; {
	case a == nil:
	case a.armed:
		a.touch()
	default:
		a.arm()
	}
}

func (w *Writer) WriteHeader(status int) {
	w.rearm()
	w.ResponseWriter.WriteHeader(status)
}

func (w *Writer) Write(p []byte) (int, error) {
	w.rearm()
	return w.ResponseWriter.Write(p)
}

func (w *Writer) Flush() {
	w.rearm()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
