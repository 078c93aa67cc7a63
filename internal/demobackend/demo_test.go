package demobackend

import (
	"strings"
	"testing"
)

func TestDemoReply(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		reasoning bool
		want      string
	}{
		{
			name: "echoes the last user message",
			body: `{"model":"m","messages":[{"role":"user","content":"earlier"},{"role":"assistant","content":"ok"},{"role":"user","content":"Hello there, how are you?"}]}`,
			want: `Demo backend reply. Your message has 7 tokens (digest 6c5382c7): "Hello there, how are you?"`,
		},
		{
			name: "acknowledges a tool result",
			body: `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"42"}]}`,
			want: `Demo backend reply. Your tool result has 1 token (digest 73475cb4): "42"`,
		},
		{
			name: "json mode",
			body: `{"model":"m","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"json please"}]}`,
			want: `{"reply":"demo","of":"message","tokens":2,"digest":"62adefd6"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, e := decodeChatRequest([]byte(tt.body))
			if e != nil {
				t.Fatal(e)
			}
			r := DemoReply(req, tt.reasoning)
			if r.Content != tt.want {
				t.Fatalf("content = %s\nwant      %s", r.Content, tt.want)
			}
			if again := DemoReply(req, tt.reasoning); again.Content != r.Content {
				t.Fatal("demo answer is not deterministic")
			}
		})
	}
}

func TestDemoReplyQuotesAndReasons(t *testing.T) {
	req, e := decodeChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 30) + `"}]}`))
	if e != nil {
		t.Fatal(e)
	}
	r := DemoReply(req, true)
	if !strings.HasSuffix(r.Content, `…"`) || strings.Count(r.Content, "word") > 13 {
		t.Fatalf("long message not shortened: %s", r.Content)
	}
	if !strings.Contains(r.Reasoning, "31 tokens") {
		t.Fatalf("reasoning = %q", r.Reasoning)
	}
}
