package upstream

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// encodeRequest is a request as the orchestrator sends one: a system
// prompt, a user message with an image, a tool call and its answer, every
// tool offered, and sampling parameters.
func encodeRequest() Request {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {"query": {"type": "string", "description": "What to look for, \"quoted\" <b>"}},
		"required": ["query"]
	}`)
	return Request{
		Model: "svc-3",
		Messages: []Message{
			{Role: "system", Content: "You are helpful.\nTools: web_search & friends </script>"},
			{Role: "user", Content: []Part{{Type: "text", Text: "Hé \u2028 look"}, {Type: "image_url", ImageURL: &ImageURL{URL: "data:image/png;base64,AAAA"}}}},
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: Function{Name: "web_search", Arguments: `{"query":"x"}`}}}},
			{Role: "tool", ToolCallID: "call_1", Content: "result"},
		},
		Tools: []ToolDefinition{
			{Type: "function", Function: FunctionSpec{Name: "web_search", Description: "Search the web.", Parameters: schema}},
			{Type: "function", Function: FunctionSpec{Name: "remember", Parameters: json.RawMessage(`{"type":"object"}`)}},
		},
		Sampling: map[string]json.RawMessage{"temperature": json.RawMessage(`0.2`), "stop": json.RawMessage(`["\n\n"]`), "seed": json.RawMessage(`7`)},
	}
}

// The hand-written body says exactly what json.Marshal of the same fields
// says.
func TestEncodeMatchesMarshal(t *testing.T) {
	for _, tt := range []struct {
		name  string
		req   Request
		model string
	}{
		{name: "full", req: encodeRequest(), model: "served-model"},
		{name: "request's model, no tools, no sampling", req: Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := new(Client).encode(tt.req, tt.model)
			if err != nil {
				t.Fatal(err)
			}
			model := tt.model
			if model == "" {
				model = tt.req.Model
			}
			want := map[string]any{
				"model":          model,
				"messages":       tt.req.Messages,
				"stream":         true,
				"stream_options": map[string]bool{"include_usage": true},
			}
			if len(tt.req.Tools) > 0 {
				want["tools"] = tt.req.Tools
			}
			for k, v := range tt.req.Sampling {
				want[k] = v
			}
			wantJSON, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("the body is not JSON: %v\n%s", err, got)
			}
			if err := json.Unmarshal(wantJSON, &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("body differs from json.Marshal's (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	req := encodeRequest()
	c := new(Client)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.encode(req, "m"); err != nil {
			b.Fatal(err)
		}
	}
}
