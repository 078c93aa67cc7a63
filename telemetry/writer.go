package telemetry

import (
	"net/http"
	"regexp"
	"time"
)

// Writer remembers the final status of a response and, when the
// gateway answered with its own error envelope, the envelope's code.
// Informational 1xx statuses pass through uncounted: the answer is still
// to come.
type Writer struct {
	http.ResponseWriter
	status int
	code   string // the apierror envelope's, told before the status

	// For the request histograms: when the request arrived, how long
	// after it the first byte of the body left (read off the monotonic
	// clock alone: half the clock reads of a time.Now), whether the
	// response is a stream (counted in flight until the request is
	// counted).
	start     time.Time
	firstByte time.Duration
	wroteBody bool
	streaming bool
	metrics   *Metrics
	request   *http.Request
}

// NewWriter watches the response to r written to rw, counting its
// stream in m.
func NewWriter(rw http.ResponseWriter, r *http.Request, m *Metrics) *Writer {
	w := new(Writer)
	w.Init(rw, r, m)
	return w
}

// Init makes w what NewWriter returns, in place: for a caller that keeps
// the writer in a value of its own.
func (w *Writer) Init(rw http.ResponseWriter, r *http.Request, m *Metrics) {
	*w = Writer{ResponseWriter: rw, start: time.Now(), metrics: m, request: r}
}

func (w *Writer) WriteHeader(status int) {
	if status >= 200 && w.status == 0 {
		w.status = status
		if status == http.StatusOK && w.metrics != nil && isEventStream(w.Header()) {
			w.streaming = true
			w.metrics.startStream(w.request)
		}
		if status < 400 {
			w.code = ""
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *Writer) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.wroteBody && len(p) > 0 {
		w.wroteBody, w.firstByte = true, time.Since(w.start)
	}
	return w.ResponseWriter.Write(p)
}

// Status is the final status written; 0 when none was.
func (w *Writer) Status() int { return w.status }

// Start is when the request reached the writer's handler.
func (w *Writer) Start() time.Time { return w.start }

// FirstByte is when the first byte of the body left; zero when none did.
func (w *Writer) FirstByte() time.Time {
	if !w.wroteBody {
		return time.Time{}
	}
	return w.start.Add(w.firstByte)
}

// Streaming reports whether the answer is an event stream.
func (w *Writer) Streaming() bool { return w.streaming }

// Code is the code of the gateway's own error envelope the answer is;
// "" for another answer.
func (w *Writer) Code() string { return w.code }

// Unwrap lets http.ResponseController reach the underlying writer, for
// flushing streams.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RecordErrorCode implements apierror.CodeRecorder: the code of an
// envelope written before the status is the answer's.
func (w *Writer) RecordErrorCode(code string) {
	if w.status != 0 {
		return
	}
	if !codePattern.MatchString(code) {
		code = "other"
	}
	w.code = code
}

// codePattern bounds the code label to what an envelope code looks like,
// so that no configured code can mint series at will.
var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
