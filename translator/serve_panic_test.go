package translator

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/tools"
)

// TestHeartbeatPanicEndsOnlyTheHeartbeat: a stream's heartbeat that
// panics (here its ticker, as it stops) is recovered and counted; the
// answer is complete and recorded for billing.
func TestHeartbeatPanicEndsOnlyTheHeartbeat(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.orch.cfg.NewTicker = func(time.Duration) (<-chan time.Time, func()) {
		return h.ticks, func() { panic("ticker bug") }
	}
	before := guard.Count(heartbeatGoroutine)
	h.up.Enqueue(testupstream.Text("All good."))
	r := h.do(chatBody(true, "Hi.", ""), withUser(nil))
	f := checkStream(t, r.body, true, true)
	if f.content != "All good." {
		t.Errorf("content %q", f.content)
	}
	if n := len(h.recorder.all()); n != 1 {
		t.Errorf("%d usage records, want 1", n)
	}
	// The heartbeat is marked stopped as its panic unwinds, just before
	// the panic is counted.
	for deadline := time.Now().Add(5 * time.Second); guard.Count(heartbeatGoroutine)-before != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeat panics counted, want 1", guard.Count(heartbeatGoroutine)-before)
		}
	}
}

// TestToolPanicFailsOnlyTheCall: a tool that panics is a failed call;
// the model hears of it, the answer ends normally and is charged.
func TestToolPanicFailsOnlyTheCall(t *testing.T) {
	before := guard.Count(toolGoroutine)
	boom := registeredTool{tools.WebSearch, &fakeTool{name: tools.NameWebSearch, run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		panic("index out of range")
	}}}
	h := newHarness(t, harnessOptions{tools: []registeredTool{boom}})
	h.up.Enqueue(testupstream.ToolCalls(searchCall), testupstream.Text("The search failed."))
	r := h.do(chatBody(true, "What is new in Go?", ""), withUser(nil))
	if r.status != 200 || !strings.Contains(r.body, `"finish_reason":"stop"`) || !strings.Contains(r.body, "[DONE]") {
		t.Fatalf("answer after a tool panic: %d %s", r.status, r.body)
	}
	if got := guard.Count(toolGoroutine) - before; got != 1 {
		t.Errorf("%d tool panics counted, want 1", got)
	}
	if recs := h.recorder.all(); len(recs) != 1 || recs[0].Rounds != 2 {
		t.Fatalf("records %+v, want one charge of both rounds", recs)
	}
}

// panicAfter is a response writer that panics once a frame containing
// marker was written, as a bug on the request's own goroutine would.
type panicAfter struct {
	http.ResponseWriter
	marker string
}

func (p *panicAfter) Write(b []byte) (int, error) {
	n, err := p.ResponseWriter.Write(b)
	if strings.Contains(string(b), p.marker) {
		panic("writer bug")
	}
	return n, err
}

func (p *panicAfter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// TestRequestPanicStillCharges: a panic on the request's goroutine after
// the backend answered charges the round and ends the connection with
// http.ErrAbortHandler, which the server closes quietly.
func TestRequestPanicStillCharges(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.up.Enqueue(testupstream.Text("One two three."))
	before := guard.Count(requestGoroutine)
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		h.doWith(context.Background(), func(w http.ResponseWriter) http.ResponseWriter {
			return &panicAfter{ResponseWriter: w, marker: `"content":"One`}
		}, chatBody(true, "Count to three.", ""), withUser(nil))
	}()
	if recovered != http.ErrAbortHandler {
		t.Fatalf("recovered %v, want http.ErrAbortHandler", recovered)
	}
	if got := guard.Count(requestGoroutine) - before; got != 1 {
		t.Errorf("%d request panics counted, want 1", got)
	}
	if recs := h.recorder.all(); len(recs) != 1 || recs[0].PromptTokens == 0 {
		t.Fatalf("records %+v, want the round charged", recs)
	}
}

// panickingFiles is a FileOpener with a bug: it panics on every call.
type panickingFiles struct{}

func (panickingFiles) OpenFile(context.Context, string, string) (Attachment, error) {
	panic("file store bug")
}

// TestPreparePanicFailsTheRequestUncharged: a panic while a request is
// prepared (here reading its attachment), on the goroutine it is
// prepared on, is recovered and counted; the client gets 500
// internal_error in the envelope, nothing reaches the backend and
// nothing is charged.
func TestPreparePanicFailsTheRequestUncharged(t *testing.T) {
	h := newHarness(t, harnessOptions{files: panickingFiles{}, ids: &countingIDs{}})
	before := guard.Count(prepareGoroutine)
	r := h.do(`{"model":"svc-3","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Read this."},{"type":"input_file","file_id":"file-doc"}]}]}`, withUser(nil))
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, `"code":"internal_error"`) {
		t.Fatalf("answer after a panic in preparation: %d %s", r.status, r.body)
	}
	if got := guard.Count(prepareGoroutine) - before; got != 1 {
		t.Errorf("%d preparation panics counted, want 1", got)
	}
	if n := len(h.up.ChatRequests()); n != 0 {
		t.Errorf("%d requests reached the backend, want none", n)
	}
	if recs := h.recorder.all(); len(recs) != 0 {
		t.Errorf("records %+v, want none", recs)
	}
}
