package translator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// doResponses sends a /v3/responses body through request.ParseResponses
// and Serve.
func (h *harness) doResponses(body string, headers map[string]string) result {
	h.t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v3/responses", strings.NewReader(body))
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	req, err := request.ParseResponses([]byte(body), r.Header, request.Limits{Profile: h.profile})
	if err != nil {
		h.t.Fatalf("request.ParseResponses: %v", err)
	}
	h.orch.Serve(rec, r, req, Caller{AccountID: "acct1", KeyID: "key1", RequestID: "req1"})
	return result{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// responsesFacts is what openai-go's stream reader made of a
// /v3/responses stream.
type responsesFacts struct {
	types     []string
	text      string // the output_text deltas joined
	extras    map[string][]json.RawMessage
	completed *responses.Response
	err       error
}

// readResponsesStream reads body with openai-go's event stream reader, as
// a client of the SDK would, checking the order every Responses stream
// keeps: sequence numbers from 0 without a gap, response.created first.
func readResponsesStream(t *testing.T, body string) responsesFacts {
	t.Helper()
	resp := &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader([]byte(body))),
	}
	stream := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	f := responsesFacts{extras: map[string][]json.RawMessage{}}
	var text strings.Builder
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != int64(len(f.types)) {
			t.Errorf("event %d (%s) has sequence_number %d", len(f.types), ev.Type, ev.SequenceNumber)
		}
		f.types = append(f.types, ev.Type)
		switch {
		case ev.Type == "response.output_text.delta":
			text.WriteString(ev.Delta)
		case ev.Type == "response.completed", ev.Type == "response.incomplete":
			r := ev.Response
			f.completed = &r
		case strings.HasPrefix(ev.Type, wire.ResponseEventPrefix):
			key := strings.TrimPrefix(ev.Type, wire.ResponseEventPrefix)
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(ev.RawJSON()), &m); err != nil || m[key] == nil || len(m) != 3 {
				t.Errorf("event %s does not carry its key alone: %s", ev.Type, ev.RawJSON())
			}
			f.extras[key] = append(f.extras[key], m[key])
		}
	}
	f.text, f.err = text.String(), stream.Err()
	if len(f.types) == 0 || f.types[0] != "response.created" {
		t.Errorf("the stream does not start with response.created: %v", f.types)
	}
	return f
}

func TestGoldenResponsesStream(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{searchTool(), documentTool()}})
	h.up.Enqueue(
		testupstream.ToolCalls(searchCall),
		testupstream.ToolCalls(documentCall),
		testupstream.Text("Here is the report."),
	)
	r := h.doResponses(`{"model":"svc-3","stream":true,"instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Report on Go 1.26."}]}]}`,
		withUser(map[string]string{request.HeaderIncludeCost: "1"}))
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s", r.status, r.body)
	}
	f := readResponsesStream(t, r.body)
	if f.err != nil {
		t.Fatalf("openai-go: %v", f.err)
	}
	if f.text != "Here is the report." || f.completed == nil || f.completed.OutputText() != f.text ||
		f.completed.Status != responses.ResponseStatusCompleted || f.types[len(f.types)-1] != "response.completed" {
		t.Fatalf("text %q, events %v", f.text, f.types)
	}
	if cost := f.completed.Usage.JSON.ExtraFields["cost_cents"]; cost.Raw() != "7" {
		t.Errorf("cost_cents %q, want the recorder's 7", cost.Raw())
	}
	if f.completed.Usage.InputTokens == 0 || f.completed.Usage.OutputTokens == 0 {
		t.Errorf("usage %s", f.completed.Usage.RawJSON())
	}
	for _, key := range []string{"act", "step", "step_data", "artifact", "search_sources"} {
		if len(f.extras[key]) == 0 {
			t.Errorf("no response.switchyard.%s event: %v", key, f.types)
		}
	}
	var art wire.Artifact
	if err := json.Unmarshal(f.extras["artifact"][0], &art); err != nil || art.FileID != "file-abc" || art.FileBase64 == "" {
		t.Errorf("artifact %s", f.extras["artifact"][0])
	}
	// The instructions reached the backend as a message of their own.
	body, _ := json.Marshal(h.up.ChatRequests()[0].Messages)
	if !strings.Contains(string(body), "Be brief.") || !strings.Contains(string(body), "Report on Go 1.26.") {
		t.Errorf("backend messages %s", body)
	}
	compareGolden(t, "responses_tool_round", r.body)
}

func TestGoldenResponsesProgressOff(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{searchTool(), documentTool()}})
	h.up.Enqueue(testupstream.ToolCalls(documentCall), testupstream.Text("Done."))
	r := h.doResponses(`{"model":"svc-3","stream":true,"input":"Write a report."}`,
		withUser(map[string]string{request.HeaderProgressStream: "0"}))
	f := readResponsesStream(t, r.body)
	if f.err != nil || f.text != "Done." {
		t.Fatalf("text %q, err %v", f.text, f.err)
	}
	for key := range f.extras {
		if key != "artifact" {
			t.Errorf("X-Progress-Stream: 0 sent response.switchyard.%s", key)
		}
	}
	if len(f.extras["artifact"]) != 1 {
		t.Errorf("artifact events %d, want 1", len(f.extras["artifact"]))
	}
	if _, ok := f.completed.Usage.JSON.ExtraFields["cost_cents"]; ok {
		t.Error("cost_cents without X-Include-Cost")
	}
}

func TestGoldenResponsesFailureDuringStream(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.up.Enqueue(demobackend.Reply{Content: "One two three four five.", BreakAfter: 3,
		BreakError: apierror.New(500, apierror.TypeServer, "server_error", "engine died")})
	r := h.doResponses(`{"model":"svc-3","stream":true,"input":"Count."}`, withUser(nil))
	f := readResponsesStream(t, r.body)
	if f.err == nil || !strings.Contains(f.err.Error(), CodeStreamInterrupted) || f.completed != nil {
		t.Fatalf("openai-go error %v, events %v", f.err, f.types)
	}
	if !strings.Contains(r.body, "event: error\ndata: {\"type\":\"error\"") {
		t.Errorf("no Responses error event:\n%s", r.body)
	}
	if recs := h.recorder.all(); len(recs) != 1 || recs[0].CompletionTokens == 0 {
		t.Errorf("records %+v: the words generated before the break are charged", recs)
	}
	compareGolden(t, "responses_failure_during_stream", r.body)
}

func TestGoldenResponsesJSON(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{searchTool(), documentTool()}})
	h.up.Enqueue(testupstream.ToolCalls(searchCall, documentCall), testupstream.Text("Here it is."))
	r := h.doResponses(`{"model":"svc-3","input":"Report on Go 1.26."}`, withUser(nil))
	if r.status != 200 {
		t.Fatalf("status %d %s", r.status, r.body)
	}
	var resp responses.Response
	if err := json.Unmarshal([]byte(r.body), &resp); err != nil {
		t.Fatal(err)
	}
	var extras struct {
		Artifacts     []wire.Artifact `json:"artifacts"`
		SearchSources []wire.Source   `json:"search_sources"`
	}
	_ = json.Unmarshal([]byte(r.body), &extras)
	if resp.OutputText() != "Here it is." || resp.Status != responses.ResponseStatusCompleted || resp.ID != "resp_test" ||
		len(extras.Artifacts) != 1 || extras.Artifacts[0].FileBase64 != "" || len(extras.SearchSources) != 1 {
		t.Fatalf("response %s", r.body)
	}
	compareGolden(t, "responses_json", r.body)
}

func TestGoldenResponsesLength(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.up.Enqueue(demobackend.Reply{Content: "Cut", FinishReason: "length"})
	r := h.doResponses(`{"model":"svc-3","stream":true,"input":"Talk."}`, withUser(nil))
	f := readResponsesStream(t, r.body)
	if f.err != nil || f.completed == nil || f.completed.Status != responses.ResponseStatusIncomplete ||
		f.completed.IncompleteDetails.Reason != "max_output_tokens" || f.types[len(f.types)-1] != "response.incomplete" {
		t.Fatalf("events %v, err %v", f.types, f.err)
	}
}

// TestResponsesWriterBeforeStart: no event is written before Start.
func TestResponsesWriterBeforeStart(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewResponsesWriter(rec, StreamOptions{ID: "resp_1", Model: "m", Progress: true})
	if err := w.Send(wire.Delta{Content: ptr("x")}); err == nil || rec.Body.Len() != 0 {
		t.Fatalf("Send before Start: %v, wrote %q", err, rec.Body.String())
	}
	_ = context.Background()
}
