package demobackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

func chatBody(text string, stream bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":    DefaultModel,
		"stream":   stream,
		"messages": []map[string]any{{"role": "user", "content": text}},
	})
	return string(b)
}

// contentOf returns the assistant text of a JSON answer.
func contentOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var c completionJSON
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content == nil {
		return ""
	}
	return *c.Choices[0].Message.Content
}

func TestStreamWireFormat(t *testing.T) {
	s := start(t, Options{Now: func() time.Time { return time.Unix(1700000000, 0) }})
	s.Enqueue(Reply{Content: "Hi there", Header: http.Header{"X-Ratelimit-Remaining-Requests": {"9"}}})
	resp := post(t, s, "/v1/chat/completions", chatBody("x", true))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("Content-Type = %q", ct)
	}
	if resp.Header.Get("X-Ratelimit-Remaining-Requests") != "9" || resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("headers = %v", resp.Header)
	}
	frames, err := sseData(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// role, "Hi", " there", finish, [DONE]
	if len(frames) != 5 || frames[4] != "[DONE]" {
		t.Fatalf("frames = %q", frames)
	}
	role := decode(t, frames[0])
	if role["object"] != "chat.completion.chunk" || fmt.Sprint(role["created"]) != "1700000000" {
		t.Fatalf("role chunk = %s", frames[0])
	}
	if _, ok := role["usage"]; ok {
		t.Fatalf("usage present without include_usage: %s", frames[0])
	}
	if !strings.Contains(frames[0], `"delta":{"role":"assistant","content":""}`) || !strings.Contains(frames[0], `"finish_reason":null`) {
		t.Fatalf("role chunk = %s", frames[0])
	}
	if !strings.Contains(frames[3], `"delta":{},"logprobs":null,"finish_reason":"stop"`) {
		t.Fatalf("finish chunk = %s", frames[3])
	}
	ids := map[any]bool{}
	for _, f := range frames[:4] {
		ids[decode(t, f)["id"]] = true
	}
	if len(ids) != 1 {
		t.Fatalf("chunks of one completion carry %d ids", len(ids))
	}
}

func TestMaxTokensCutsAnswer(t *testing.T) {
	s := start(t, Options{})
	s.Enqueue(Reply{Content: "one two three four five", ToolCalls: []ToolCall{{Name: "f", Arguments: "{}"}}})
	resp := post(t, s, "/v1/chat/completions", `{"model":"m","max_completion_tokens":3,"messages":[{"role":"user","content":"x"}]}`)
	var c struct {
		completionJSON
		Usage usageJSON `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	ch := c.Choices[0]
	if *ch.Message.Content != "one two three" || ch.FinishReason != "length" || len(ch.Message.ToolCalls) != 0 || c.Usage.CompletionTokens != 3 {
		t.Fatalf("cut answer = %+v usage %+v", ch, c.Usage)
	}
}

func TestUsageOverride(t *testing.T) {
	s := start(t, Options{})
	s.Enqueue(Reply{Content: "x", Usage: &Usage{PromptTokens: 1000, CompletionTokens: 7, TotalTokens: 1007}})
	resp := post(t, s, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`)
	frames, _ := sseData(resp.Body)
	last := frames[len(frames)-2]
	if !strings.Contains(last, `"choices":[]`) || !strings.Contains(last, `"usage":{"prompt_tokens":1000,"completion_tokens":7,"total_tokens":1007}`) {
		t.Fatalf("usage chunk = %s", last)
	}

	// A usage object Usage cannot spell goes out as written, streamed or
	// not.
	raw := `{"prompt_tokens":-5,"completion_tokens":1e30,"total_tokens":"x"}`
	s.Enqueue(Reply{Content: "x", UsageJSON: json.RawMessage(raw)})
	resp = post(t, s, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`)
	frames, _ = sseData(resp.Body)
	if last := frames[len(frames)-2]; !strings.Contains(last, `"usage":`+raw) {
		t.Fatalf("usage chunk = %s", last)
	}
	s.Enqueue(Reply{Content: "x", UsageJSON: json.RawMessage(raw)})
	resp = post(t, s, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"usage":`+raw) {
		t.Fatalf("answer = %s", b)
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name       string
		reply      Reply
		wantFrames int  // data frames received before the end
		wantDone   bool // stream ends with [DONE]
		wantErrEOF bool // reading ends with an error
		wantLast   string
	}{
		{name: "drop after two frames", reply: Reply{Content: "a b c d", BreakAfter: 2}, wantFrames: 2, wantErrEOF: true},
		{name: "drop before DONE", reply: Reply{Content: "a b", BreakAfter: 100}, wantFrames: 4, wantErrEOF: true},
		{
			name:       "error frame",
			reply:      Reply{Content: "a b c d", BreakAfter: 3, BreakError: apierror.New(500, apierror.TypeServer, "generation_failed", "engine died")},
			wantFrames: 5, wantDone: true, wantLast: `"code":"generation_failed"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, Options{})
			s.Enqueue(tt.reply)
			resp := post(t, s, "/v1/chat/completions", chatBody("x", true))
			frames, err := sseData(resp.Body)
			if (err != nil) != tt.wantErrEOF {
				t.Fatalf("read error = %v, want error %v", err, tt.wantErrEOF)
			}
			if len(frames) != tt.wantFrames {
				t.Fatalf("frames = %q, want %d", frames, tt.wantFrames)
			}
			if done := frames[len(frames)-1] == "[DONE]"; done != tt.wantDone {
				t.Fatalf("ended with [DONE] = %v", done)
			}
			if tt.wantLast != "" && !strings.Contains(frames[len(frames)-2], tt.wantLast) {
				t.Fatalf("error frame = %s", frames[len(frames)-2])
			}
		})
	}
}

func TestJSONFailures(t *testing.T) {
	t.Run("disconnect", func(t *testing.T) {
		s := start(t, Options{})
		s.Enqueue(Reply{Disconnect: true})
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(chatBody("x", false)))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("got status %d, want a transport error", resp.StatusCode)
		}
	})
	t.Run("cut body", func(t *testing.T) {
		s := start(t, Options{})
		s.Enqueue(Reply{Content: "hello", BreakAfter: 1})
		resp := post(t, s, "/v1/chat/completions", chatBody("x", false))
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("read error = %v, want unexpected EOF", err)
		}
	})
	t.Run("raw body", func(t *testing.T) {
		s := start(t, Options{})
		s.Enqueue(errorReply(http.StatusBadGateway, "<html>bad gateway</html>"))
		resp := post(t, s, "/v1/chat/completions", chatBody("x", true))
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 502 || string(b) != "<html>bad gateway</html>" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	})
}

func TestDelaysKeepOrder(t *testing.T) {
	s := start(t, Options{TimeToFirstToken: 2 * time.Millisecond, InterTokenDelay: time.Millisecond})
	text := "alpha beta gamma delta"
	s.Enqueue(Reply{Reasoning: "hmm ok", Content: text}, textReply(text))
	resp := post(t, s, "/v1/chat/completions", chatBody("x", true))
	frames, err := sseData(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, f := range frames[:len(frames)-1] {
		var c chunkJSON
		if err := json.Unmarshal([]byte(f), &c); err != nil {
			t.Fatal(err)
		}
		if d := c.Choices[0].Delta; d.Content != nil {
			got.WriteString(*d.Content)
		}
	}
	if got.String() != text {
		t.Fatalf("streamed %q", got.String())
	}
	if c := contentOf(t, post(t, s, "/v1/chat/completions", chatBody("x", false))); c != text {
		t.Fatalf("JSON answer %q", c)
	}
}

// TestClientCancellationStopsStream checks that the handler returns once
// the client goes away, instead of waiting to generate the next token.
func TestClientCancellationStopsStream(t *testing.T) {
	s := New(Options{InterTokenDelay: time.Hour, Answer: func(*Request) (Reply, bool) {
		return textReply("first second third"), true
	}})
	handlerDone := make(chan struct{})
	// A plain http.Server, because httptest's Close would wait for a
	// handler that, in the failure this test looks for, never returns.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		s.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ln.Addr().String()+"/v1/chat/completions", strings.NewReader(chatBody("x", true)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the role chunk has arrived
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-handlerDone:
	case <-time.After(10 * time.Second):
		t.Fatal("handler still streaming after the client left")
	}
}
