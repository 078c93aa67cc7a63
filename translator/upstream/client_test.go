package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// rawUpstream serves body with the given content type to every request
// and keeps the last request body.
func rawUpstream(t *testing.T, contentType, body string) (*Client, *[]byte) {
	t.Helper()
	var mu sync.Mutex
	var last []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = b
		mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	u, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "up-key", Model: "served-model"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	return u, &last
}

type roundResult struct {
	content, reasoning string
	calls              []ToolCall
	finish             string
	usage              *billing.Usage
	chars              wire.Chars
	err                error
}

func drain(t *testing.T, u *Client) roundResult {
	t.Helper()
	return round(context.Background(), u, Request{Model: "svc-3", Messages: NewConversation(Message{Role: "user", Content: "hi"})})
}

// round streams req to its end and gathers what the stream carried.
func round(ctx context.Context, u *Client, req Request) roundResult {
	st, err := u.Stream(ctx, req)
	if err != nil {
		return roundResult{err: err}
	}
	defer st.Close()
	var r roundResult
	for {
		ev, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			r.err = err
			return r
		}
		switch ev.Kind {
		case EventContent:
			r.content += ev.Text
		case EventReasoning:
			r.reasoning += ev.Text
		}
	}
	r.calls, r.finish, r.usage, r.chars = st.ToolCalls(), st.FinishReason(), st.Usage(), st.Chars()
	return r
}

func eventStream(frames ...string) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteString("data: " + f + "\n\n")
	}
	return b.String()
}

func TestUpstreamDialects(t *testing.T) {
	usage := `{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`
	cases := []struct {
		name        string
		contentType string
		body        string
		want        roundResult
		wantErr     bool
	}{
		{
			name: "OpenAI and vLLM: split arguments by index, usage chunk after finish",
			body: eventStream(
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"web_search","arguments":""}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				usage, "[DONE]"),
			want: roundResult{
				calls:  []ToolCall{{ID: "call_a", Type: "function", Function: Function{Name: "web_search", Arguments: `{"query":"go"}`}}},
				finish: "tool_calls", usage: &billing.Usage{Prompt: 11, Completion: 7}, chars: wire.Chars{Args: 14},
			},
		},
		{
			name: "two calls interleaved by index",
			body: eventStream(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}},{"index":1,"id":"b","function":{"name":"g","arguments":"["}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"]"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			want: roundResult{
				calls: []ToolCall{
					{ID: "a", Type: "function", Function: Function{Name: "f", Arguments: "{}"}},
					{ID: "b", Type: "function", Function: Function{Name: "g", Arguments: "[]"}},
				},
				finish: "tool_calls", chars: wire.Chars{Args: 4},
			},
		},
		{
			name: "Ollama: whole calls without index, reasoning field, finish stop, no usage",
			body: eventStream(
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"think"}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_1","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_2","function":{"name":"g","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]"),
			want: roundResult{
				reasoning: "think",
				calls: []ToolCall{
					{ID: "call_1", Type: "function", Function: Function{Name: "f", Arguments: `{"a":1}`}},
					{ID: "call_2", Type: "function", Function: Function{Name: "g", Arguments: "{}"}},
				},
				finish: "tool_calls", chars: wire.Chars{Think: 5, Args: 9},
			},
		},
		{
			name: "arguments sent as an object",
			body: eventStream(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":{"a":1}}}]},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			want: roundResult{
				calls:  []ToolCall{{ID: "x", Type: "function", Function: Function{Name: "f", Arguments: `{"a":1}`}}},
				finish: "tool_calls", chars: wire.Chars{Args: 7},
			},
		},
		{
			name: "legacy function_call",
			body: eventStream(
				`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{\"a\""}}}]}`,
				`{"choices":[{"index":0,"delta":{"function_call":{"arguments":":2}"}}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}`, "[DONE]"),
			want: roundResult{
				calls:  []ToolCall{{Type: "function", Function: Function{Name: "f", Arguments: `{"a":2}`}}},
				finish: "tool_calls", chars: wire.Chars{Args: 7},
			},
		},
		{
			name: "llama.cpp: CRLF, comments, reasoning_content, null finish then usage-only chunk",
			body: strings.ReplaceAll(": ping\n\n"+eventStream(
				`{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8,"completion_tokens_details":{"reasoning_tokens":2}}}`,
				"[DONE]"), "\n", "\r\n"),
			want: roundResult{content: "Hi", reasoning: "hmm", finish: "stop",
				usage: &billing.Usage{Prompt: 5, Completion: 3, Reasoning: 2}, chars: wire.Chars{Think: 3, Text: 2}},
		},
		{
			name: "think block in content",
			body: eventStream(
				`{"choices":[{"index":0,"delta":{"content":"<thi"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"nk>secret</th"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"ink>\n\nAnswer"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]"),
			want: roundResult{content: "Answer", reasoning: "secret", finish: "stop", chars: wire.Chars{Think: 6, Text: 6}},
		},
		{
			name: "length finish kept",
			body: eventStream(`{"choices":[{"index":0,"delta":{"content":"abc"},"finish_reason":"length"}]}`, "[DONE]"),
			want: roundResult{content: "abc", finish: "length", chars: wire.Chars{Text: 3}},
		},
		{
			name: "usage on every chunk: the last wins",
			body: eventStream(
				`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`,
				`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`, "[DONE]"),
			want: roundResult{content: "ab", finish: "stop", usage: &billing.Usage{Prompt: 5, Completion: 2}, chars: wire.Chars{Text: 2}},
		},
		{
			name: "stream ends after finish without [DONE]",
			body: eventStream(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`),
			want: roundResult{content: "ok", finish: "stop", chars: wire.Chars{Text: 2}},
		},
		{
			name:        "JSON answer to a streaming request",
			contentType: "application/json",
			body:        `{"choices":[{"index":0,"message":{"role":"assistant","content":"Whole","reasoning_content":"r","tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
			want: roundResult{content: "Whole", reasoning: "r", finish: "tool_calls",
				calls: []ToolCall{{ID: "t", Type: "function", Function: Function{Name: "f", Arguments: "{}"}}},
				usage: &billing.Usage{Prompt: 3, Completion: 4}, chars: wire.Chars{Think: 1, Text: 5, Args: 2}},
		},
		{name: "error frame", body: eventStream(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, `{"error":{"message":"engine died","code":500}}`, "[DONE]"), wantErr: true},
		{name: "broken stream", body: eventStream(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`), wantErr: true},
		{name: "malformed chunk", body: eventStream(`{"choices":[`), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct := tc.contentType
			if ct == "" {
				ct = "text/event-stream"
			}
			u, _ := rawUpstream(t, ct, tc.body)
			got := drain(t, u)
			if tc.wantErr {
				var ue *Error
				if !errors.As(got.err, &ue) {
					t.Fatalf("got %v, want an *Error", got.err)
				}
				return
			}
			if got.err != nil {
				t.Fatal(got.err)
			}
			gj, _ := json.Marshal(got.calls)
			wj, _ := json.Marshal(tc.want.calls)
			if got.content != tc.want.content || got.reasoning != tc.want.reasoning || string(gj) != string(wj) ||
				got.finish != tc.want.finish || got.chars != tc.want.chars {
				t.Errorf("got content %q reasoning %q calls %s finish %q chars %+v\nwant content %q reasoning %q calls %s finish %q chars %+v",
					got.content, got.reasoning, gj, got.finish, got.chars,
					tc.want.content, tc.want.reasoning, wj, tc.want.finish, tc.want.chars)
			}
			if (got.usage == nil) != (tc.want.usage == nil) || (got.usage != nil && *got.usage != *tc.want.usage) {
				t.Errorf("usage %+v, want %+v", got.usage, tc.want.usage)
			}
		})
	}
}

func TestUpstreamRequestBody(t *testing.T) {
	u, last := rawUpstream(t, "text/event-stream", eventStream(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]"))
	r := round(context.Background(), u, Request{
		Model:    "svc-3",
		Messages: NewConversation(Message{Role: "user", Content: "hi"}),
		Tools:    []ToolDefinition{{Type: "function", Function: FunctionSpec{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		Sampling: map[string]json.RawMessage{"temperature": json.RawMessage("0.5")},
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	var body struct {
		Model         string            `json:"model"`
		Stream        bool              `json:"stream"`
		StreamOptions map[string]bool   `json:"stream_options"`
		Tools         []json.RawMessage `json:"tools"`
		Temperature   float64           `json:"temperature"`
	}
	if err := json.Unmarshal(*last, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "served-model" || !body.Stream || !body.StreamOptions["include_usage"] || len(body.Tools) != 1 || body.Temperature != 0.5 {
		t.Errorf("request body %s", *last)
	}
}

func TestUpstreamStatusErrors(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		status                  int
		wantMessage             string
	}{
		{name: "OpenAI envelope", status: 400, contentType: "application/json", body: `{"error":{"message":"context length exceeded","type":"invalid_request_error"}}`, wantMessage: "context length exceeded"},
		{name: "Ollama flat error", status: 404, contentType: "application/json", body: `{"error":"model not found"}`, wantMessage: "model not found"},
		{name: "vLLM message", status: 400, contentType: "application/json", body: `{"object":"error","message":"bad tools"}`, wantMessage: "bad tools"},
		{name: "proxy HTML page", status: 502, contentType: "text/html", body: `<html>Bad gateway</html>`, wantMessage: "<html>Bad gateway</html>"},
		{name: "empty body", status: 503, wantMessage: "Service Unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			u, _ := New(Config{BaseURL: srv.URL})
			defer u.Close()
			_, err := u.Stream(context.Background(), Request{Model: "m"})
			var ue *Error
			if !errors.As(err, &ue) || ue.Status != tc.status || ue.Message != tc.wantMessage {
				t.Fatalf("got %#v, want status %d message %q", err, tc.status, tc.wantMessage)
			}
		})
	}
}

// manualTimer lets a test fire the stream watchdog.
type manualTimer struct {
	mu     sync.Mutex
	f      func()
	armed  chan struct{}
	resets int
}

func (m *manualTimer) Stop() bool { return true }
func (m *manualTimer) Reset(time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resets++
	return true
}

func withManualTimer(u *Client) *manualTimer {
	m := &manualTimer{armed: make(chan struct{}, 1)}
	u.afterFunc = func(d time.Duration, f func()) watchdogTimer {
		m.mu.Lock()
		m.f = f
		m.mu.Unlock()
		m.armed <- struct{}{}
		return m
	}
	return m
}

func (m *manualTimer) fire() {
	m.mu.Lock()
	f := m.f
	m.mu.Unlock()
	f()
}

// stallingUpstream sends the given frames, then waits for the request to
// end. It reports that it received the request and that the request
// ended.
func stallingUpstream(t *testing.T, frames string) (u *Client, received, ended <-chan struct{}) {
	t.Helper()
	recv := make(chan struct{})
	end := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body to its end lets the server notice the client
		// going away, which cancels r.Context().
		_, _ = io.Copy(io.Discard, r.Body)
		if frames != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, frames)
			_ = http.NewResponseController(w).Flush()
		}
		close(recv)
		<-r.Context().Done()
		close(end)
	}))
	t.Cleanup(srv.Close)
	up, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	return up, recv, end
}

func TestUpstreamFirstByteTimeout(t *testing.T) {
	u, received, ended := stallingUpstream(t, "")
	m := withManualTimer(u)
	errc := make(chan error, 1)
	go func() {
		_, err := u.Stream(context.Background(), Request{Model: "m"})
		errc <- err
	}()
	<-m.armed
	<-received
	m.fire()
	err := <-errc
	var ue *Error
	if !errors.As(err, &ue) || !ue.Timeout {
		t.Fatalf("got %v, want a timeout *Error", err)
	}
	<-ended // the backend saw the request cancelled
}

func TestUpstreamIdleTimeout(t *testing.T) {
	u, _, ended := stallingUpstream(t, eventStream(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`))
	m := withManualTimer(u)
	st, err := u.Stream(context.Background(), Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	<-m.armed
	if ev, err := st.Next(); err != nil || ev.Text != "a" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	m.mu.Lock()
	resets := m.resets
	m.mu.Unlock()
	if resets == 0 {
		t.Fatalf("watchdog not re-armed for the idle timeout after an event")
	}
	m.fire()
	_, err = st.Next()
	var ue *Error
	if !errors.As(err, &ue) || !ue.Timeout {
		t.Fatalf("got %v, want a timeout *Error", err)
	}
	<-ended
}

func TestUpstreamCancelledByCaller(t *testing.T) {
	u, _, ended := stallingUpstream(t, eventStream(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`))
	ctx, cancel := context.WithCancel(context.Background())
	st, err := u.Stream(ctx, Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := st.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	<-ended // the backend's request ended: generation stops there
}

func TestUpstreamReusesConnections(t *testing.T) {
	u, _ := rawUpstream(t, "text/event-stream", eventStream(`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`, "[DONE]"))
	var reused []bool
	for i := 0; i < 3; i++ {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
		})
		if r := round(ctx, u, Request{Model: "m"}); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if len(reused) != 3 || reused[0] || !reused[1] || !reused[2] {
		t.Fatalf("connection reuse %v, want [false true true]", reused)
	}
}

func TestNewUpstreamRejectsBadURL(t *testing.T) {
	if _, err := New(Config{BaseURL: "localhost:8000"}); err == nil {
		t.Fatal("accepted a base URL without scheme")
	}
}

// TestRequestBodyLetGoOnceSent: the encoded request is sent with its
// length, each piece dropped once read to its end (or all when closed),
// and encoded again for a retry that asks for it.
func TestRequestBodyLetGoOnceSent(t *testing.T) {
	pieces := func() [][]byte {
		return [][]byte{[]byte(`{"model":"m","messages":[`), []byte(`{"role":"user","content":"hi"}`), {}, []byte(`],"stream":true}`)}
	}
	body := bytes.Join(pieces(), nil)
	r, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/v1/chat/completions", nil)
	if err != nil {
		t.Fatal(err)
	}
	encodes := 0
	setBody(r, pieces(), func() [][]byte { encodes++; return pieces() })
	if r.ContentLength != int64(len(body)) {
		t.Errorf("ContentLength %d, want %d", r.ContentLength, len(body))
	}
	// Read in small steps, as across the pieces' ends.
	got, err := io.ReadAll(io.LimitReader(r.Body, 10))
	if err != nil || !bytes.Equal(got, body[:10]) {
		t.Fatalf("read %q, %v; want %q", got, err, body[:10])
	}
	if held := r.Body.(*sentOnce).parts; len(held) != 4 {
		t.Errorf("%d pieces held while the first is read, want 4", len(held))
	}
	var rest []byte
	buf := make([]byte, 7)
	for {
		n, err := r.Body.Read(buf)
		rest = append(rest, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := string(got) + string(rest); got != string(body) {
		t.Fatalf("read %q; want %q", got, body)
	}
	if held := r.Body.(*sentOnce).parts; held != nil {
		t.Errorf("%d pieces still held after the body was sent", len(held))
	}
	again, err := r.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(again); !bytes.Equal(got, body) || encodes != 1 {
		t.Errorf("the retry's body %q after %d encodings, want %q after 1", got, encodes, body)
	}

	cut := &sentOnce{parts: pieces()}
	if _, err := cut.Read(make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	cut.Close()
	if cut.parts != nil {
		t.Error("a body closed before its end is still held")
	}
}

// Every round goes out with the same headers (the key, the body's type,
// the stream's), the very same map, which no transport writes to, and
// a 3xx is the backend's failure, not followed: the round goes through
// the client's own transport, without http.Client's copy of the headers
// for redirects.
func TestRoundsShareTheirHeadersAndFollowNoRedirect(t *testing.T) {
	var mu sync.Mutex
	var headers []http.Header
	redirected := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved/chat/completions" {
			mu.Lock()
			redirected++
			mu.Unlock()
		}
		mu.Lock()
		headers = append(headers, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Location", "/moved/chat/completions")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	u, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "up-key", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var sent []http.Header
	inner := u.client.Transport
	u.client.Transport = rtFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r.Header)
		return inner.RoundTrip(r)
	})
	for range 2 {
		_, err := u.Stream(context.Background(), Request{Model: "svc-3", Messages: NewConversation(Message{Role: "user", Content: "hi"})})
		var ue *Error
		if !errors.As(err, &ue) || ue.Status != http.StatusTemporaryRedirect {
			t.Fatalf("a redirect answered %v, want the backend's failure with its status", err)
		}
	}
	if redirected != 0 || len(headers) != 2 {
		t.Fatalf("%d requests, %d of them to the redirect's target; want 2 and none", len(headers), redirected)
	}
	for _, h := range headers {
		if h.Get("Authorization") != "Bearer up-key" || h.Get("Content-Type") != "application/json" || h.Get("Accept") != "text/event-stream" {
			t.Errorf("request headers %v", h)
		}
	}
	if len(sent) != 2 || reflect.ValueOf(sent[0]).UnsafePointer() != reflect.ValueOf(sent[1]).UnsafePointer() {
		t.Error("the rounds' headers are maps of their own")
	}
}
