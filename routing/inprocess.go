package routing

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// ServeInProcess serves one round of the /v3 client through a pool in
// process: serve writes the answer to a ResponseWriter whose headers
// become the returned response and whose body streams through a pipe.
// status is the answer's status when serve fails before writing
// (0: 502).
func ServeInProcess(req *http.Request, serve func(http.ResponseWriter) error, status func(error) int) *http.Response {
	pr, pw := io.Pipe()
	w := &pipeResponse{req: req, header: make(http.Header), body: pr, pw: pw,
		ready: make(chan *http.Response, 1), status: status}
	go func() {
		defer func() {
			// reverse_proxy ends a response it cannot complete (the
			// upstream broke off) with panic(http.ErrAbortHandler),
			// which the server would catch for a real request. Any
			// other panic is a bug: logged with its stack and counted,
			// and the round fails as a broken answer would.
			if rec := recover(); rec != nil {
				if rec != http.ErrAbortHandler {
					guard.Recovered(poolRoundGoroutine, rec)
				}
				w.finish(fmt.Errorf("the upstream's answer broke off: %v", rec))
			}
		}()
		w.finish(serve(w))
	}()
	return <-w.ready
}

// pipeResponse is the http.ResponseWriter of a round served in process:
// the headers become an *http.Response, the body flows through a pipe.
type pipeResponse struct {
	req    *http.Request
	header http.Header
	body   *io.PipeReader
	pw     *io.PipeWriter
	ready  chan *http.Response
	sent   bool
	status func(error) int
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	if w.sent || code < 200 {
		return
	}
	w.sent = true
	h := w.header.Clone()
	w.ready <- &http.Response{
		Status:     strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode: code,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        h,
		Body:          w.body,
		ContentLength: -1,
		Request:       w.req,
	}
}

func (w *pipeResponse) Write(b []byte) (int, error) {
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
	return w.pw.Write(b)
}

// FlushError implements the flushing http.ResponseController asks for;
// the pipe holds nothing back.
func (w *pipeResponse) FlushError() error { return nil }

// finish ends the round: a pool that never answered becomes an answer
// with its status and an error body the client reads as one.
func (w *pipeResponse) finish(err error) {
	if w.sent {
		w.pw.CloseWithError(err)
		return
	}
	status := http.StatusBadGateway
	if s := w.status(err); s != 0 {
		status = s
	}
	msg := "no upstream of the pool answered"
	if err != nil {
		msg += ": " + err.Error()
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg}})
	w.header.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	guard.Go(poolRoundGoroutine, func() {
		_, _ = w.pw.Write(b)
		w.pw.Close()
	})
}

// poolRoundGoroutine names the goroutines of rounds served in process,
// as internal/guard counts their panics.
var poolRoundGoroutine = guard.Name("model_pool_round")
