package translator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/memory"
)

func nopTool(name string, c tools.Capability) registeredTool {
	return registeredTool{c, &fakeTool{name: name, run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Content: "ok"}, nil
	}}}
}

func TestConversationSentUpstream(t *testing.T) {
	mem := &fakeMemory{facts: map[string][]string{"acct1/user-42": {"Prefers metric units."}}}
	files := fakeFiles{
		"acct1/file-txt": {Name: "notes.txt", MIME: "text/plain", Text: "Quarterly numbers: 42."},
		"acct1/file-img": {Name: "chart.png", MIME: "image/png", Image: pngBytes},
	}
	h := newHarness(t, harnessOptions{files: files, memory: mem, tools: []registeredTool{
		{tools.EndUserMemory, &memory.Tool{Store: mem}},
	}})
	h.up.Enqueue(testupstream.Text("ok"))
	body := `{"model":"svc-3","messages":[
		{"role":"system","content":"Answer like a pirate."},
		{"role":"user","content":"First question"},
		{"role":"assistant","content":"First answer"},
		{"role":"user","content":[
			{"type":"text","text":"Look at these"},
			{"type":"input_file","file_id":"file-txt"},
			{"type":"input_file","file_id":"file-img"},
			{"type":"image_url","image_url":{"url":` + jsonString(dataURL("image/png", pngBytes)) + `}}
		]}],
		"objects":{"obj1":{"kind":"chart","source":"{\"type\":\"bar\"}","title":"Sales"},"obj2":{"kind":"tombstone"}}}`
	r := h.do(body, map[string]string{request.HeaderUserID: "user-42", request.HeaderUserName: "Ada", request.HeaderTimezone: "Asia/Tokyo"})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	reqs := h.up.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d upstream requests", len(reqs))
	}
	msgs := reqs[0].Messages
	if len(msgs) != 4 || msgs[0].Role != "system" || msgs[1].Role != "user" || msgs[2].Role != "assistant" || msgs[3].Role != "user" {
		t.Fatalf("roles: %+v", msgs)
	}
	system := msgs[0].Text()
	for _, want := range []string{
		"Saturday, 14 March 2026, 18:26 (Asia/Tokyo, UTC+09:00)", // testNow in Tokyo
		"The user's name is Ada.",
		"Prefers metric units.",
		"remember",
		"### obj1 (chart): Sales",
		`{"type":"bar"}`,
		"Deleted ids, never to be used again: obj2.",
		"Answer like a pirate.",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Index(system, "Answer like a pirate.") < strings.Index(system, "Prefers metric units.") {
		t.Errorf("client instructions come before the service's part")
	}
	parts := msgs[3].Parts()
	if len(parts) != 4 || parts[0].Text != "Look at these" || !strings.Contains(parts[1].Text, "Quarterly numbers: 42.") ||
		parts[2].Type != "image_url" || parts[3].Type != "image_url" || !strings.HasPrefix(parts[3].ImageURL.URL, "data:image/png;base64,") {
		t.Errorf("user parts %+v", parts)
	}
	if !reqs[0].HasTool(tools.NameRemember) {
		t.Errorf("remember not offered to a request with an end user")
	}
}

func TestToolsOfferedByMode(t *testing.T) {
	all := []registeredTool{
		nopTool(tools.NameWebSearch, tools.WebSearch),
		nopTool(tools.NameOpenURL, tools.OpenURL),
		nopTool(tools.NameCreateDocument, tools.FileOutput),
		nopTool(tools.NameDeleteObject, tools.FileOutput),
		{tools.EndUserMemory, &memory.Tool{Store: &fakeMemory{}}},
	}
	cases := []struct {
		name    string
		extra   string
		message string
		user    string
		want    []string
	}{
		{name: "full", user: "u", want: []string{"web_search", "open_url", "create_document", "delete_object", "remember"}},
		{name: "no end user: no memory", want: []string{"web_search", "open_url", "create_document", "delete_object"}},
		{name: "text plus search", extra: `"modalities":["text"]`, want: []string{"web_search", "open_url"}},
		{name: "text only, no search", extra: `"modalities":["text"],"skip_search":true`},
		{name: "full, no search", extra: `"skip_search":true`, want: []string{"create_document", "delete_object"}},
		{name: "no search but a user link", extra: `"skip_search":true`, message: "Summarise https://example.com/a.", want: []string{"open_url", "create_document", "delete_object"}},
		{name: "no search in extra_body", extra: `"extra_body":{"skip_search":true,"modalities":["text"]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{tools: all})
			h.up.Enqueue(testupstream.Text("ok"))
			msg := tc.message
			if msg == "" {
				msg = "hello"
			}
			headers := map[string]string{}
			if tc.user != "" {
				headers[request.HeaderUserID] = tc.user
			}
			if r := h.do(chatBody(false, msg, tc.extra), headers); r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var got []string
			for _, tl := range h.up.ChatRequests()[0].Tools {
				got = append(got, tl.Function.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("offered %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRememberEndToEnd(t *testing.T) {
	mem := &fakeMemory{}
	h := newHarness(t, harnessOptions{memory: mem, tools: []registeredTool{{tools.EndUserMemory, &memory.Tool{Store: mem, MaxFacts: 2}}}})
	remember := func(fact string) demobackend.Reply {
		return testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameRemember, Arguments: `{"fact":` + jsonString(fact) + `}`})
	}
	h.up.Enqueue(remember("Lives in Lisbon."), remember("Has a cat."), remember("Likes tea."), testupstream.Text("Noted."))
	if r := h.do(chatBody(false, "Remember things.", ""), map[string]string{request.HeaderUserID: "u1"}); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	facts, _ := mem.Facts(context.Background(), "acct1", "u1")
	if !slices.Equal(facts, []string{"Has a cat.", "Likes tea."}) {
		t.Fatalf("facts %v: want the two newest", facts)
	}
	h.up.Enqueue(testupstream.Text("Hi"))
	h.do(chatBody(false, "Hello again.", ""), map[string]string{request.HeaderUserID: "u1"})
	reqs := h.up.ChatRequests()
	if system := reqs[len(reqs)-1].Messages[0].Text(); !strings.Contains(system, "- Likes tea.") || strings.Contains(system, "Lisbon") {
		t.Errorf("memory in the next conversation's prompt:\n%s", system)
	}
}

func TestRoundLimit(t *testing.T) {
	h := newHarness(t, harnessOptions{maxRounds: 2, tools: []registeredTool{searchTool()}})
	h.up.Enqueue(testupstream.ToolCalls(searchCall), testupstream.Text("Final."))
	r := h.do(chatBody(true, "Search forever.", ""), withUser(nil))
	f := checkStream(t, r.body, true, true)
	reqs := h.up.ChatRequests()
	if len(reqs) != 2 || len(reqs[0].Tools) == 0 || len(reqs[1].Tools) != 0 {
		t.Fatalf("rounds %d; the last round must be offered no tools", len(reqs))
	}
	if f.content != "Final." {
		t.Errorf("content %q", f.content)
	}
}

func TestInvalidToolArguments(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{searchTool()}})
	h.up.Enqueue(testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameWebSearch, Arguments: `{"query":`}), testupstream.Text("Sorry."))
	r := h.do(chatBody(true, "Search.", ""), withUser(nil))
	f := checkStream(t, r.body, true, true)
	if f.actsClosed[2] != wire.ActFail {
		t.Errorf("tool act closed %q", f.actsClosed[2])
	}
	reqs := h.up.ChatRequests()
	if got := reqs[1].Messages[len(reqs[1].Messages)-1].Text(); got != "error: the arguments are not valid JSON" {
		t.Errorf("model told %q", got)
	}
}

func TestFileNotFoundBeforeUpstream(t *testing.T) {
	h := newHarness(t, harnessOptions{files: fakeFiles{}})
	r := h.do(userWith(`[{"type":"input_file","file_id":"file-missing"}]`), nil)
	if r.status != 404 || !strings.Contains(r.body, CodeFileNotFound) {
		t.Fatalf("got %d %s, want 404 %s", r.status, r.body, CodeFileNotFound)
	}
	if n := len(h.up.Requests()); n != 0 {
		t.Errorf("%d upstream requests for a refused request", n)
	}
}

func TestArtifactsDroppedWhenFilesOff(t *testing.T) {
	// A tool that is offered in text mode but returns an artifact anyway
	// must not get one to the client.
	rogue := registeredTool{tools.WebSearch, &fakeTool{name: tools.NameWebSearch, run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Content: "x", Artifacts: []wire.Artifact{{Type: "image", ObjectID: "el1", Title: "x"}}}, nil
	}}}
	h := newHarness(t, harnessOptions{tools: []registeredTool{rogue}})
	h.up.Enqueue(testupstream.ToolCalls(searchCall), testupstream.Text("Done."))
	r := h.do(chatBody(true, "Go.", `"modalities":["text"]`), withUser(nil))
	if f := checkStream(t, r.body, true, true); f.artifacts != 0 {
		t.Errorf("artifact sent to a text-only request")
	}
}

// serveWithoutUsage serves one revision A JSON request saying message,
// from a backend that answers content and never sends usage, as some
// llama.cpp builds do. It returns the response and the usage records.
func serveWithoutUsage(t *testing.T, message, content string) (*httptest.ResponseRecorder, []storage.UsageRecord) {
	t.Helper()
	chunk, err := json.Marshal(content)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"+string(chunk)+"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	u, err := upstream.New(upstream.Config{BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	rec := &fakeRecorder{}
	p := policy.ProfileFor(policy.RevisionA)
	o, err := New(Config{Upstream: u, Profile: p, Usage: rec, Now: fakeclock.New(testNow).Now})
	if err != nil {
		t.Fatal(err)
	}
	req, err := request.Parse([]byte(chatBody(false, message, "")), http.Header{}, request.Limits{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	o.Serve(w, httptest.NewRequest("POST", "/", nil), req, Caller{AccountID: "a"})
	return w, rec.all()
}

func TestUsageEstimatedWithoutUpstreamUsage(t *testing.T) {
	w, recs := serveWithoutUsage(t, "hi", "Four chars each")
	var resp wire.Completion
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if len(recs) != 1 || !recs[0].Estimated || recs[0].CompletionTokens != 4 || recs[0].PromptTokens == 0 {
		t.Fatalf("records %+v", recs)
	}
	if resp.Usage.CompletionTokens != 4 || resp.Usage.AnswerTokens == nil || *resp.Usage.AnswerTokens != 4 {
		t.Errorf("usage %+v", resp.Usage)
	}
}

func TestUpstreamTimeoutBeforeStream(t *testing.T) {
	// The backend accepts the request and never answers.
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stall) })
	u, err := upstream.New(upstream.Config{BaseURL: srv.URL + "/v1", Model: "m", FirstByteTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	o, err := New(Config{Upstream: u, Profile: policy.ProfileFor(policy.RevisionB)})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := request.Parse([]byte(chatBody(true, "hi", "")), http.Header{}, request.Limits{Profile: policy.ProfileFor(policy.RevisionB)})
	w := httptest.NewRecorder()
	o.Serve(w, httptest.NewRequest("POST", "/", nil), req, Caller{})
	if w.Code != 504 || !strings.Contains(w.Body.String(), CodeUpstreamTimeout) {
		t.Fatalf("got %d %s, want 504 %s", w.Code, w.Body, CodeUpstreamTimeout)
	}
}

func TestNewChecksConfig(t *testing.T) {
	if _, err := New(Config{Profile: policy.ProfileFor(policy.RevisionB)}); err == nil {
		t.Error("accepted a config without upstream")
	}
	u, _ := upstream.New(upstream.Config{BaseURL: "http://127.0.0.1:1"})
	if _, err := New(Config{Upstream: u}); err == nil {
		t.Error("accepted a config without profile")
	}
}

func TestProfileCost(t *testing.T) {
	b := policy.ProfileFor(policy.RevisionB)
	a := policy.ProfileFor(policy.RevisionA)
	cases := []struct {
		name               string
		p                  policy.Profile
		prompt, completion int64
		want               int64
	}{
		{name: "minimum charge", p: b, prompt: 10, completion: 10, want: 1},
		{name: "half rounds up", p: b, prompt: 5000, completion: 0, want: 2},         // 1.5 cents
		{name: "below half rounds down", p: b, prompt: 4000, completion: 0, want: 1}, // 1.2 cents
		{name: "output price", p: a, prompt: 0, completion: 1_000_000, want: 1000},
		{name: "revision B cap", p: b, prompt: 10_000_000, completion: 10_000_000, want: 500},
		{name: "revision A has no cap", p: a, prompt: 10_000_000, completion: 10_000_000, want: 13000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Price(tc.prompt, tc.completion); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// The turn lets go of the parsed messages once they are encoded for the
// backend, on its own copy: the caller's request is left as it was.
func TestServeLeavesTheCallersRequestAsItWas(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	body := chatBody(false, "Hello there", "")
	req, err := request.Parse([]byte(body), http.Header{}, request.Limits{Profile: h.profile})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := httptest.NewRequest(http.MethodPost, "/v3/chat/completions", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.orch.Serve(rec, r, req, Caller{AccountID: "acct1", KeyID: "key1", RequestID: "req1"})
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i+1, rec.Code, rec.Body)
		}
	}
	if len(req.Messages) != 1 {
		t.Fatalf("the caller's request holds %d messages after Serve, want 1", len(req.Messages))
	}
	sent := h.up.Requests()
	if len(sent) != 2 {
		t.Fatalf("the backend saw %d requests, want 2", len(sent))
	}
	for i, s := range sent {
		if !strings.Contains(string(s.Body), "Hello there") {
			t.Errorf("request %d to the backend lacks the user's message: %s", i+1, s.Body)
		}
	}
}
