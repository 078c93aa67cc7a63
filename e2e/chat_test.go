package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
)

// v3Stream posts a streaming /v3 request and returns the raw events.
func v3Stream(t *testing.T, g *gateway, key, body string, header ...string) (int, string) {
	t.Helper()
	hdr := append([]string{"Content-Type", "application/json"}, header...)
	status, _, out := g.do("POST", "/v3/chat/completions", key, body, hdr...)
	return status, out
}

// events decodes the data frames of an event stream, failing on anything
// that is not a JSON chunk, an error frame or the final [DONE].
func events(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || done {
			t.Fatalf("unexpected line %q in:\n%s", line, stream)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		out = append(out, m)
	}
	if !done {
		t.Fatalf("stream did not end with [DONE]:\n%s", stream)
	}
	return out
}

func delta(ev map[string]any) map[string]any {
	choices, _ := ev["choices"].([]any)
	if len(choices) == 0 {
		return nil
	}
	d, _ := choices[0].(map[string]any)["delta"].(map[string]any)
	return d
}

func TestChatStreamWithOpenAIClient(t *testing.T) {
	up, e, key, g := fundedGateway(t, "chatter")
	client := openaiClient(g, key, "/v3")

	up.Enqueue(testupstream.Text("Rivers run to the sea."))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "svc-3",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me about rivers.")},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if got := acc.Choices[0].Message.Content; got != "Rivers run to the sea." {
		t.Fatalf("content %q", got)
	}
	// Revision B: the final chunk always carries usage, which includes the
	// service's own prompt.
	if acc.Usage.PromptTokens <= 5 || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
		t.Fatalf("usage %+v", acc.Usage)
	}
	// The upstream saw the configured model, never the client's key.
	reqs := up.ChatRequests()
	if len(reqs) != 1 || reqs[0].Model != demobackend.DefaultModel {
		t.Fatalf("upstream requests %d, model %q", len(reqs), reqs[0].Model)
	}
	if auth := up.Requests()[len(up.Requests())-1].Header.Get("Authorization"); strings.Contains(auth, key) {
		t.Fatal("the caller's key reached the upstream")
	}

	// The charge is on the ledger.
	show := mustCLI(t, e, "accounts", "show", "--account", "chatter").stdout
	if !strings.Contains(show, "charge") || strings.Contains(show, "Balance:     $10.00") {
		t.Fatalf("no charge after a completion:\n%s", show)
	}
}

func TestChatStreamEvents(t *testing.T) {
	up, e, key, g := fundedGateway(t, "events")

	up.Enqueue(demobackend.Reply{Reasoning: "Let me think about it.", Content: "Forty-two."})
	status, body := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"The answer?"}]}`,
		"X-Include-Cost", "1")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	evs := events(t, body)
	var content strings.Builder
	var acts, reasoning int
	var usage map[string]any
	for _, ev := range evs {
		if ev["object"] != "chat.completion.chunk" {
			t.Fatalf("frame object %v", ev["object"])
		}
		d := delta(ev)
		if c, ok := d["content"].(string); ok {
			content.WriteString(c)
		}
		if _, ok := d["act"]; ok {
			acts++
		}
		if _, ok := d["reasoning_chars"]; ok {
			reasoning++
		}
		if u, ok := ev["usage"].(map[string]any); ok {
			usage = u
		}
	}
	if content.String() != "Forty-two." || strings.Contains(body, "Let me think") {
		t.Fatalf("content %q; reasoning text leaked: %v", content.String(), strings.Contains(body, "Let me think"))
	}
	if acts < 2 || reasoning == 0 {
		t.Fatalf("%d act events, %d reasoning_chars events:\n%s", acts, reasoning, body)
	}
	if usage == nil || usage["cost_cents"] == nil {
		t.Fatalf("final usage %v", usage)
	}
	// cost_cents is what the ledger was charged, priced from the usage.
	got := charges(t, e, "events")
	prompt, completion := int64(usage["prompt_tokens"].(float64)), int64(usage["completion_tokens"].(float64))
	want := policy.ProfileFor(policy.RevisionB).Price(prompt, completion)
	if len(got) != 1 || -got[0].AmountCents != int64(usage["cost_cents"].(float64)) || -got[0].AmountCents != want {
		t.Fatalf("ledger charges %+v; cost_cents %v; price of the usage %d", got, usage["cost_cents"], want)
	}

	// Progress off: only text (and artifacts).
	up.Enqueue(demobackend.Reply{Reasoning: "Hmm.", Content: "Plain."})
	_, body = v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Again"}]}`,
		"X-Progress-Stream", "0")
	if strings.Contains(body, `"act"`) || strings.Contains(body, "reasoning_chars") {
		t.Fatalf("progress off still sends events:\n%s", body)
	}
}

func TestChatNonStreaming(t *testing.T) {
	up, _, key, g := fundedGateway(t, "jsonuser", "SWITCHYARD_REVISION", "A")
	client := openaiClient(g, key, "/v3")
	up.Enqueue(testupstream.Text("A complete answer."))
	resp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "svc-3",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "A complete answer." || resp.Usage.TotalTokens == 0 {
		t.Fatalf("response %+v", resp)
	}
}

func TestChatValidation(t *testing.T) {
	up, e, key, g := fundedGateway(t, "sloppy")
	tests := []struct {
		name   string
		body   string
		header []string
		status int
		code   string
	}{
		{"no text modality", `{"model":"svc-3","modalities":["files"],"messages":[{"role":"user","content":"x"}]}`, nil, 400, "invalid_modalities"},
		{"no text modality in extra_body", `{"model":"svc-3","extra_body":{"modalities":["image"]},"messages":[{"role":"user","content":"x"}]}`, nil, 400, "invalid_modalities"},
		{"remote attachment", `{"model":"svc-3","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`, nil, 400, "unsupported_url_scheme"},
		{"empty messages", `{"model":"svc-3","messages":[]}`, nil, 400, ""},
		{"malformed JSON", `{"model":`, nil, 400, ""},
		{"long system message", `{"model":"svc-3","messages":[{"role":"system","content":"` + strings.Repeat("s", 2001) + `"},{"role":"user","content":"x"}]}`, nil, 400, ""},
		{"bad timezone", `{"model":"svc-3","messages":[{"role":"user","content":"x"}]}`, []string{"X-Timezone", "Mars/Olympus"}, 400, ""},
		{"someone else's file", `{"model":"svc-3","messages":[{"role":"user","content":[{"type":"input_file","file_id":"file-AAAAAAAAAAAAAAAAAAAAAAAA"}]}]}`, nil, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := g.do("POST", "/v3/chat/completions", key, tt.body, tt.header...)
			wantError(t, "chat", status, body, tt.status, tt.code, "invalid_request_error")
		})
	}
	if n := len(up.ChatRequests()); n != 0 {
		t.Fatalf("invalid requests reached the upstream: %d", n)
	}
	if show := mustCLI(t, e, "accounts", "show", "--account", "sloppy").stdout; strings.Contains(show, "charge") {
		t.Fatalf("invalid requests were charged:\n%s", show)
	}
}

func TestChatMemoryAcrossConversations(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "mem-a")
	otherKey := fundedKey(t, e, "mem-b")
	g := startGateway(t, e)

	up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "remember", Arguments: `{"fact":"prefers answers in French"}`}),
		testupstream.Text("Noted."),
	)
	if status, body := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Answer in French from now on."}]}`,
		"X-User-Id", "u-1"); status != 200 {
		t.Fatalf("first conversation: %d %s", status, body)
	}
	systemOf := func() string {
		reqs := up.ChatRequests()
		last := reqs[len(reqs)-1]
		return last.Messages[0].Text()
	}
	for _, tc := range []struct {
		name      string
		key       string
		user      string
		remembers bool
	}{
		{"same user", key, "u-1", true},
		{"other user of the account", key, "u-2", false},
		{"same user id, other account", otherKey, "u-1", false},
		{"no user id", key, "", false},
	} {
		up.Enqueue(testupstream.Text("Bonjour."))
		var hdr []string
		if tc.user != "" {
			hdr = []string{"X-User-Id", tc.user}
		}
		if status, body := v3Stream(t, g, tc.key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Hello"}]}`, hdr...); status != 200 {
			t.Fatalf("%s: %d %s", tc.name, status, body)
		}
		if got := strings.Contains(systemOf(), "prefers answers in French"); got != tc.remembers {
			t.Errorf("%s: fact in the system prompt = %v, want %v", tc.name, got, tc.remembers)
		}
	}
}

func TestChatAttachment(t *testing.T) {
	up, _, key, g := fundedGateway(t, "attacher")
	status, _, body := g.do("POST", "/v3/files", key, multipartBody("B", "notes.md", "# Plan\nShip on Friday."),
		"Content-Type", "multipart/form-data; boundary=B")
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var f struct{ ID string }
	_ = json.Unmarshal([]byte(body), &f)
	up.Enqueue(testupstream.Text("Friday."))
	status, out := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"When do we ship?"},{"type":"input_file","file_id":"`+f.ID+`"}]}]}`)
	if status != 200 {
		t.Fatalf("chat: %d %s", status, out)
	}
	var sent strings.Builder
	for _, m := range up.ChatRequests()[0].Messages {
		sent.WriteString(m.Text())
	}
	if !strings.Contains(sent.String(), "Ship on Friday.") {
		t.Fatalf("the file's text did not reach the model:\n%s", sent.String())
	}
}

func TestChatQueuePosition(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "waiter")
	g := startGateway(t, e, switchyardConfig(t, "limits {\n\t\t\tqueue 1\n\t\t}"))

	first := make(chan string, 1)
	go func() {
		_, body := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"first"}]}`)
		first <- body
	}()
	// Wait until the first request holds the only slot.
	for deadline := time.Now().Add(5 * time.Second); len(up.Requests()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first request never reached the upstream")
		}
	}
	_, body := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"second"}]}`)
	<-first
	evs := events(t, body)
	sawQueue, sawContentFirst := false, false
	for _, ev := range evs {
		d := delta(ev)
		if _, ok := d["queue_position"]; ok {
			if sawContentFirst {
				t.Fatal("queue_position after content")
			}
			sawQueue = true
		}
		if c, ok := d["content"].(string); ok && c != "" {
			sawContentFirst = true
		}
	}
	if !sawQueue || !sawContentFirst {
		t.Fatalf("queue_position %v, content %v:\n%s", sawQueue, sawContentFirst, body)
	}
}

func TestChatBodyTooLarge(t *testing.T) {
	up, _, key, g := fundedGateway(t, "bulky")
	big := `{"model":"svc-3","messages":[{"role":"user","content":"` + strings.Repeat("a", 50<<20) + `"}]}`
	for _, path := range []string{"/v3/chat/completions", "/v1/chat/completions"} {
		status, _, body := g.do("POST", path, key, big)
		wantError(t, path+" with a 50 MB body", status, body, http.StatusRequestEntityTooLarge, "request_too_large", "")
	}
	if n := len(up.ChatRequests()); n != 0 {
		t.Fatalf("an oversized body reached the upstream")
	}
}
