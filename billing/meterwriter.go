package billing

import "net/http"

// MeterWriter passes a response through a Meter: a 2xx answer is
// metered, any other passes as it is.
type MeterWriter struct {
	http.ResponseWriter
	Meter *Meter

	status    int          // the final status; informational 1xx ones do not count
	onHeaders HeadersNoter // told when a 2xx answer's headers go out
}

// A HeadersNoter is told when a 2xx answer's headers go out, the
// upstream's first byte (MeterWriter.Init). It is an interface so that
// a caller can be told through a pointer it has, where a method value
// would be an allocation a request.
type HeadersNoter interface{ HeadersSent() }

// headersFunc is a func as a HeadersNoter.
type headersFunc func()

func (f headersFunc) HeadersSent() { f() }

// NewMeterWriter passes what is written to w through m; onHeaders (nil:
// nothing) is called when a 2xx answer's headers go out, the upstream's
// first byte.
func NewMeterWriter(w http.ResponseWriter, m *Meter, onHeaders func()) *MeterWriter {
	mw := new(MeterWriter)
	var n HeadersNoter
	if onHeaders != nil {
		n = headersFunc(onHeaders)
	}
	mw.Init(w, m, n)
	return mw
}

// Init makes mw what NewMeterWriter returns, in place: for a caller that
// keeps the writer in a value of its own. onHeaders (nil: nobody) is
// told when a 2xx answer's headers go out.
func (mw *MeterWriter) Init(w http.ResponseWriter, m *Meter, onHeaders HeadersNoter) {
	*mw = MeterWriter{ResponseWriter: w, Meter: m, onHeaders: onHeaders}
}

// Status is the answer's final status; 0 before one was written.
func (w *MeterWriter) Status() int { return w.status }

func (w *MeterWriter) WriteHeader(code int) {
	if code < 200 {
		// 103 Early Hints and the like go to the client; the answer is
		// still to come.
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if w.status != 0 {
		return
	}
	w.status = code
	if w.metered() {
		if w.onHeaders != nil {
			w.onHeaders.HeadersSent()
		}
		// The name as the proxy copies it from the upstream's answer:
		// Get would canonicalise it anew.
		var contentType string
		if v := w.Header()["Content-Type"]; len(v) > 0 {
			contentType = v[0]
		}
		w.Meter.Start(contentType)
		if w.Meter.Streamed() || w.Meter.ShowsCost() {
			// The usage chunk may be removed, or cost_cents added: the
			// length is no longer known. Other answers pass through as
			// they are.
			w.Header().Del("Content-Length")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *MeterWriter) metered() bool { return w.status >= 200 && w.status <= 299 }

func (w *MeterWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.metered() {
		return w.ResponseWriter.Write(p)
	}
	if out := w.Meter.Write(p); len(out) > 0 {
		if _, err := w.ResponseWriter.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// FlushRest sends what the meter still holds when the answer ends.
func (w *MeterWriter) FlushRest() {
	if !w.metered() {
		return
	}
	if rest := w.Meter.Close(); len(rest) > 0 {
		_, _ = w.ResponseWriter.Write(rest)
	}
}

// Unwrap lets http.ResponseController reach the underlying writer, so
// that streams are still flushed chunk by chunk.
func (w *MeterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
