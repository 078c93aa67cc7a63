package translator

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func searchTool() registeredTool {
	return registeredTool{tools.WebSearch, &fakeTool{name: tools.NameWebSearch, run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		return tools.Result{
			Content: "Go 1.26 was released in February 2026.",
			Sources: []wire.Source{{Title: "Go 1.26 release notes", URL: "https://go.dev/doc/go1.26"}},
		}, nil
	}}}
}

func documentTool() registeredTool {
	return registeredTool{tools.FileOutput, &fakeTool{name: tools.NameCreateDocument, run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		c.ReportStep(wire.Step{SID: "1", Label: "Typesetting", Status: wire.StepActive})
		c.ReportData(wire.StepData{SID: "1", Label: "Typesetting", Content: "# Report"})
		c.ReportStep(wire.Step{SID: "1", Label: "Typesetting", Status: wire.StepDone})
		return tools.Result{
			Content: "Created obj1 (document) \"Report\".",
			Object:  "obj1",
			Artifacts: []wire.Artifact{{
				Type: "document", ObjectID: "obj1", Title: "Report", FileID: "file-abc",
				MIMEType: "application/pdf", FileBase64: "JVBERi0xLjQK",
			}},
		}, nil
	}}}
}

func failingSearchTool() registeredTool {
	return registeredTool{tools.WebSearch, &fakeTool{name: tools.NameWebSearch, run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{}, tools.Failf("the search service is unavailable")
	}}}
}

var (
	searchCall   = demobackend.ToolCall{Name: tools.NameWebSearch, Arguments: `{"query":"go 1.26 release"}`}
	documentCall = demobackend.ToolCall{Name: tools.NameCreateDocument, Arguments: `{"title":"Report","markdown":"# Report"}`}
)

type goldenCase struct {
	name     string
	revision policy.Revision
	stream   bool
	extra    string // extra request body fields
	headers  map[string]string
	tools    []registeredTool
	replies  []demobackend.Reply

	wantStatus  int    // default 200
	wantContent string // accumulated answer text
	wantFinish  string // default "stop" for successful streams
	wantError   string // in-stream or HTTP error code
	wantUsage   bool   // the stream carries usage
	check       func(t *testing.T, h *harness, r result, f streamFacts)
}

func TestGoldenTranscripts(t *testing.T) {
	cases := []goldenCase{
		{
			name: "plain_answer_b", stream: true,
			replies:     []demobackend.Reply{testupstream.Text("Hello there, how can I help?")},
			wantContent: "Hello there, how can I help?", wantUsage: true,
		},
		{
			name: "plain_answer_a", revision: policy.RevisionA, stream: true,
			replies:     []demobackend.Reply{testupstream.Text("Hello there.")},
			wantContent: "Hello there.",
		},
		{
			name: "plain_answer_a_include_usage", revision: policy.RevisionA, stream: true,
			extra:       `"stream_options":{"include_usage":true}`,
			replies:     []demobackend.Reply{testupstream.Text("Hello there.")},
			wantContent: "Hello there.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if _, ok := f.usage["answer_tokens"]; !ok {
					t.Errorf("revision A usage lacks answer_tokens: %v", f.usage)
				}
			},
		},
		{
			name: "plain_answer_b_include_usage_cost", stream: true,
			extra:       `"stream_options":{"include_usage":true}`,
			headers:     map[string]string{request.HeaderIncludeCost: "1"},
			replies:     []demobackend.Reply{testupstream.Text("Hello there.")},
			wantContent: "Hello there.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if f.usage["cost_cents"] == nil || f.usage["cost_cents"].(interface{ String() string }).String() != "7" {
					t.Errorf("cost_cents = %v, want the recorder's 7", f.usage["cost_cents"])
				}
				if _, ok := f.usage["answer_tokens"]; ok {
					t.Errorf("revision B usage has answer_tokens")
				}
			},
		},
		{
			name: "reasoning_b", stream: true,
			replies:     []demobackend.Reply{{Reasoning: "The user greets me. I should greet back.", Content: "Hi!"}},
			wantContent: "Hi!", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if !f.deltaKeys["reasoning_chars"] {
					t.Errorf("no reasoning_chars event")
				}
				if strings.Contains(r.body, "greet back") {
					t.Errorf("reasoning text reached the client")
				}
			},
		},
		{
			name: "reasoning_a", revision: policy.RevisionA, stream: true,
			replies:     []demobackend.Reply{{Reasoning: "The user greets me. I should greet back.", Content: "Hi!"}},
			wantContent: "Hi!",
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if strings.Contains(r.body, "greet back") || f.deltaKeys["reasoning_chars"] {
					t.Errorf("reasoning leaked into a revision A stream")
				}
			},
		},
		{
			name: "tool_round", stream: true,
			tools:       []registeredTool{searchTool()},
			replies:     []demobackend.Reply{testupstream.ToolCalls(searchCall), testupstream.Text("Go 1.26 came out in February 2026.")},
			wantContent: "Go 1.26 came out in February 2026.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if !f.deltaKeys["search_sources"] {
					t.Errorf("no search_sources event")
				}
				reqs := h.up.ChatRequests()
				if len(reqs) != 2 {
					t.Fatalf("%d upstream requests, want 2", len(reqs))
				}
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Role != "tool" || !strings.Contains(last.Text(), "February 2026") {
					t.Errorf("tool result not fed back: %+v", last)
				}
				recs := h.recorder.all()
				if len(recs) != 1 || recs[0].Rounds != 2 || recs[0].ToolCalls != 1 {
					t.Fatalf("usage records %+v", recs)
				}
				// Billed prompt tokens are the sum over both rounds,
				// service context included.
				if recs[0].PromptTokens <= int64(demobackend.PromptTokens(reqs[1])) {
					t.Errorf("prompt tokens %d not summed over rounds", recs[0].PromptTokens)
				}
			},
		},
		{
			name: "two_tool_rounds", stream: true,
			tools: []registeredTool{searchTool(), documentTool()},
			replies: []demobackend.Reply{
				{Content: "Let me check.", ToolCalls: []demobackend.ToolCall{searchCall}},
				testupstream.ToolCalls(documentCall),
				testupstream.Text("Here is your report."),
			},
			wantContent: "Let me check.\n\nHere is your report.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if f.artifacts != 1 || !f.deltaKeys["step"] || !f.deltaKeys["step_data"] {
					t.Errorf("artifacts %d, keys %v", f.artifacts, f.deltaKeys)
				}
				if !strings.Contains(r.body, `"obj":"obj1"`) {
					t.Errorf("act done lacks obj")
				}
			},
		},
		{
			name: "tool_failure", stream: true,
			tools:       []registeredTool{failingSearchTool()},
			replies:     []demobackend.Reply{testupstream.ToolCalls(searchCall), testupstream.Text("I could not search right now.")},
			wantContent: "I could not search right now.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if f.actsClosed[2] != wire.ActFail {
					t.Errorf("tool activity closed with %q, want fail", f.actsClosed[2])
				}
				reqs := h.up.ChatRequests()
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Text() != "error: the search service is unavailable" {
					t.Errorf("model told %q", last.Text())
				}
			},
		},
		{
			name: "unknown_tool_called", stream: true,
			replies: []demobackend.Reply{
				testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameCreateDocument, Arguments: `{}`}),
				testupstream.Text("Files are off."),
			},
			extra:       `"modalities":["text"]`,
			wantContent: "Files are off.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if f.actsClosed[2] != wire.ActFail {
					t.Errorf("call of a tool that was not offered did not fail")
				}
			},
		},
		{
			name: "upstream_failure_before_stream", stream: true,
			replies:    []demobackend.Reply{testupstream.Error(500, "")},
			wantStatus: 502, wantError: CodeUpstreamError,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if n := len(h.recorder.all()); n != 0 {
					t.Errorf("%d usage records for a request the backend never worked on", n)
				}
			},
		},
		{
			name: "upstream_failure_during_stream", stream: true,
			replies:     []demobackend.Reply{{Content: "This answer breaks off in the middle of it.", BreakAfter: 4}},
			wantContent: "This answer breaks", wantError: CodeStreamInterrupted,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				recs := h.recorder.all()
				if len(recs) != 1 || recs[0].Outcome != storage.OutcomeUpstreamFailed || !recs[0].Estimated {
					t.Errorf("records %+v", recs)
				}
			},
		},
		{
			name: "upstream_error_frame_during_tool_round", stream: true,
			tools: []registeredTool{searchTool()},
			replies: []demobackend.Reply{
				testupstream.ToolCalls(searchCall),
				{Content: "Partial text", BreakAfter: 2, BreakError: internalErrorForTest()},
			},
			wantContent: "Partial", wantError: CodeStreamInterrupted,
		},
		{
			name: "progress_off", stream: true,
			headers:     map[string]string{request.HeaderProgressStream: "0"},
			tools:       []registeredTool{searchTool(), documentTool()},
			replies:     []demobackend.Reply{{Reasoning: "Plan.", ToolCalls: []demobackend.ToolCall{searchCall}}, testupstream.ToolCalls(documentCall), testupstream.Text("Done.")},
			wantContent: "Done.", wantUsage: true,
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				for _, k := range []string{"act", "step", "search_sources", "reasoning_chars"} {
					if f.deltaKeys[k] {
						t.Errorf("%s in a bare stream", k)
					}
				}
				if f.artifacts != 1 {
					t.Errorf("artifact dropped from a bare stream")
				}
			},
		},
		{
			name: "text_only_json", stream: false,
			extra:   `"modalities":["text"],"skip_search":true`,
			tools:   []registeredTool{searchTool(), documentTool()},
			replies: []demobackend.Reply{testupstream.Text("Plain text answer.")},
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if tools := h.up.ChatRequests()[0].Tools; len(tools) != 0 {
					t.Errorf("text-only, no-search request offered %d tools", len(tools))
				}
			},
		},
		{
			name: "document_json", stream: false,
			headers: map[string]string{request.HeaderIncludeCost: "1"},
			tools:   []registeredTool{documentTool()},
			replies: []demobackend.Reply{testupstream.ToolCalls(documentCall), testupstream.Text("Your report is ready.")},
			check: func(t *testing.T, h *harness, r result, f streamFacts) {
				if strings.Contains(r.body, "JVBERi0xLjQK") {
					t.Errorf("non-streaming answer carries inline base64")
				}
				if !strings.Contains(r.body, `"file_id":"file-abc"`) {
					t.Errorf("artifact file_id missing")
				}
			},
		},
		{
			name: "upstream_failure_json", stream: false,
			replies:    []demobackend.Reply{testupstream.Error(503, "")},
			wantStatus: 502, wantError: CodeUpstreamError,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{revision: tc.revision, tools: tc.tools})
			h.up.Enqueue(tc.replies...)
			r := h.do(chatBody(tc.stream, "What is new in Go?", tc.extra), withUser(tc.headers))
			checkGoldenResult(t, h, tc, r)
		})
	}
}

func withUser(h map[string]string) map[string]string {
	out := map[string]string{request.HeaderUserID: "user-42"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

func internalErrorForTest() *apierror.Error {
	return apierror.New(500, apierror.TypeServer, "internal_error", "engine crashed")
}

func checkGoldenResult(t *testing.T, h *harness, tc goldenCase, r result) {
	t.Helper()
	wantStatus := tc.wantStatus
	if wantStatus == 0 {
		wantStatus = http.StatusOK
	}
	if r.status != wantStatus {
		t.Fatalf("status %d, want %d: %s", r.status, wantStatus, r.body)
	}
	var f streamFacts
	switch {
	case wantStatus != http.StatusOK:
		if !strings.Contains(r.body, `"code":"`+tc.wantError+`"`) {
			t.Errorf("error body %s, want code %s", r.body, tc.wantError)
		}
	case tc.stream:
		f = checkStream(t, r.body, h.profile.Revision == policy.RevisionB, tc.headers[request.HeaderProgressStream] != "0")
		if f.content != tc.wantContent {
			t.Errorf("content %q, want %q", f.content, tc.wantContent)
		}
		if f.errorCode != tc.wantError {
			t.Errorf("error code %q, want %q", f.errorCode, tc.wantError)
		}
		if tc.wantError == "" {
			want := tc.wantFinish
			if want == "" {
				want = "stop"
			}
			if f.finish != want {
				t.Errorf("finish_reason %q, want %q", f.finish, want)
			}
		}
		if (f.usage != nil) != tc.wantUsage {
			t.Errorf("usage sent %v, want %v", f.usage != nil, tc.wantUsage)
		}
		cc, extra, err := parseWithOpenAI(t, r.body)
		switch {
		case tc.wantError == "" && err != nil:
			t.Errorf("openai-go: %v", err)
		case tc.wantError != "" && err == nil:
			t.Errorf("openai-go saw no error in a failed stream")
		}
		if len(cc.Choices) > 0 && cc.Choices[0].Message.Content != tc.wantContent {
			t.Errorf("openai-go accumulated %q, want %q", cc.Choices[0].Message.Content, tc.wantContent)
		}
		if tc.wantError == "" && tc.wantUsage && cc.Usage.TotalTokens == 0 {
			t.Errorf("openai-go saw no usage")
		}
		for k := range f.deltaKeys {
			if k != "role" && k != "content" && !extra[k] {
				t.Errorf("openai-go did not keep extra delta key %q", k)
			}
		}
	default:
		if r.header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", r.header.Get("Content-Type"))
		}
	}
	if tc.check != nil {
		tc.check(t, h, r, f)
	}
	compareGolden(t, tc.name, describe(r))
}

var (
	msPattern = regexp.MustCompile(`"ms":\d+`)
	idPattern = regexp.MustCompile(`"id":"chatcmpl-[^"]*"`)
)

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	got = msPattern.ReplaceAllString(got, `"ms":0`)
	got = idPattern.ReplaceAllString(got, `"id":"chatcmpl-X"`)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// cancelAfter is a response writer whose client leaves once a frame
// containing marker was written: the request context is cancelled and
// every later write fails, as with a closed connection.
type cancelAfter struct {
	http.ResponseWriter
	marker string
	cancel context.CancelFunc
	mu     sync.Mutex
	gone   bool
}

func (c *cancelAfter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return 0, errors.New("write: broken pipe")
	}
	n, err := c.ResponseWriter.Write(b)
	if strings.Contains(string(b), c.marker) {
		c.gone = true
		c.cancel()
	}
	return n, err
}

func (c *cancelAfter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func TestGoldenClientDisconnect(t *testing.T) {
	h := newHarness(t, harnessOptions{up: demobackend.Options{InterTokenDelay: 5 * time.Millisecond}})
	h.up.Enqueue(testupstream.Text("One two three four five six seven eight nine ten."))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := h.doWith(ctx, func(w http.ResponseWriter) http.ResponseWriter {
		return &cancelAfter{ResponseWriter: w, marker: `"content":"One"`, cancel: cancel}
	}, chatBody(true, "Count to ten.", ""), withUser(nil))
	if strings.Contains(r.body, "[DONE]") {
		t.Errorf("stream to a departed client went on: %s", r.body)
	}
	recs := h.recorder.all()
	if len(recs) != 1 {
		t.Fatalf("%d usage records, want 1 (recorded although the client left)", len(recs))
	}
	if recs[0].Outcome != storage.OutcomeClientGone || recs[0].PromptTokens == 0 {
		t.Errorf("record %+v", recs[0])
	}
	compareGolden(t, "client_disconnect", r.body)
}

// slowSearch runs a request whose web search outlasts the heartbeat
// interval, with two ticks of the heartbeat clock while the tool runs:
// the first comes after the stream has been idle long enough, the second
// is taken only after the first was handled, when it is no longer idle.
func slowSearch(t *testing.T, headers map[string]string) result {
	t.Helper()
	started := make(chan struct{})
	release := make(chan struct{})
	slow := registeredTool{tools.WebSearch, &fakeTool{name: tools.NameWebSearch, run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		close(started)
		<-release
		return tools.Result{Content: "nothing found"}, nil
	}}}
	h := newHarness(t, harnessOptions{tools: []registeredTool{slow}})
	h.up.Enqueue(testupstream.ToolCalls(searchCall), testupstream.Text("Nothing found."))
	go func() {
		<-started
		h.clock.Advance(DefaultHeartbeat)
		h.ticks <- testNow
		h.ticks <- testNow
		close(release)
	}()
	return h.do(chatBody(true, "Search something.", ""), headers)
}

func TestGoldenHeartbeat(t *testing.T) {
	r := slowSearch(t, withUser(nil))
	f := checkStream(t, r.body, true, true)
	if strings.Count(r.body, `"op":"tick"`) != 1 {
		t.Errorf("want exactly one tick:\n%s", r.body)
	}
	if f.content != "Nothing found." {
		t.Errorf("content %q", f.content)
	}
	compareGolden(t, "heartbeat", r.body)
}

func TestHeartbeatCommentWhenProgressOff(t *testing.T) {
	r := slowSearch(t, withUser(map[string]string{request.HeaderProgressStream: "0"}))
	f := checkStream(t, r.body, true, false)
	if f.comments != 1 || strings.Contains(r.body, `"act"`) {
		t.Errorf("want one keepalive comment and no act:\n%s", r.body)
	}
	if _, _, err := parseWithOpenAI(t, r.body); err != nil {
		t.Errorf("openai-go: %v", err)
	}
}

// TestWriteFailureStillCountsTheRound: a write to the client fails while
// the request's context is still live (the connection broke before the
// server noticed). The round the backend was generating is still billed.
func TestWriteFailureStillCountsTheRound(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.up.Enqueue(testupstream.Text("One two three four five six seven eight nine ten."))
	r := h.doWith(context.Background(), func(w http.ResponseWriter) http.ResponseWriter {
		return &cancelAfter{ResponseWriter: w, marker: `"content":"One"`, cancel: func() {}}
	}, chatBody(true, "Count to ten.", ""), withUser(nil))
	if strings.Contains(r.body, "[DONE]") {
		t.Errorf("stream to a broken client went on: %s", r.body)
	}
	recs := h.recorder.all()
	if len(recs) != 1 || recs[0].PromptTokens == 0 || recs[0].CompletionTokens == 0 {
		t.Fatalf("records %+v: want the round's prompt and completion counted", recs)
	}
}
