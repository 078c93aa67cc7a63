package upstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/tokenizer"
)

// estimateRequest is a /v3 round's request of the size estimates see:
// a long system prompt, a conversation with tool calls and their
// results, and a set of tools, past the tokenizer's budget in all.
func estimateRequest(tools int) Request {
	system := strings.Repeat("You are the gateway's assistant. Answer briefly; cite the docs. It's billed in cents.\n", 60)
	result := strings.Repeat(`{"city":"Köln","temp_c":7.5,"wind":"SW 12 km/h","note":"中文 text, too"}`, 40)
	ms := []Message{
		{Role: "system", Content: system},
		{Role: "user", Content: "What's the weather in Köln, and what should I wear?"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function",
			Function: Function{Name: "get_weather", Arguments: `{"location":"Köln, DE","unit":"celsius"}`}}}},
		{Role: "tool", ToolCallID: "call_1", Content: result},
		{Role: "user", Parts: []Part{{Type: "text", Text: "And this picture?"}, {Type: "image_url"}}},
	}
	var defs []ToolDefinition
	for i := range tools {
		schema, _ := json.Marshal(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What to look for, in plain words"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100 + i},
			},
			"required": []string{"query"},
		})
		defs = append(defs, ToolDefinition{Type: "function", Function: FunctionSpec{
			Name: "tool_" + strings.Repeat("x", i), Description: "Looks things up for the assistant.", Parameters: schema}})
	}
	return Request{Messages: NewConversation(ms...), Tools: defs}
}

// estimatePromptByAdd is estimatePrompt as it was, every text given to
// the counter as a string.
func estimatePromptByAdd(req Request) int64 {
	var text tokenizer.Counter
	n := int64(0)
	conv := req.Messages
	for i, m := range conv.messages {
		n += tokensPerMessage
		if m.Parts == nil {
			text.Add(conv.content(i))
		}
		for _, p := range m.Parts {
			if p.Type == "image_url" {
				n += tokensPerImage
			} else {
				text.Add(p.Text)
			}
		}
		for _, tc := range m.ToolCalls {
			text.Add(tc.Function.Name)
			text.Add(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		text.Add(t.Function.Name)
		text.Add(t.Function.Description)
		text.Add(string(t.Function.Parameters))
	}
	return n + text.Tokens()
}

// The estimate is the same number however its texts reach the counter,
// within the budget and past it.
func TestEstimatePromptUnchanged(t *testing.T) {
	for _, tools := range []int{0, 1, 8, 200} {
		req := estimateRequest(tools)
		if got, want := estimatePrompt(req), estimatePromptByAdd(req); got != want {
			t.Errorf("%d tools: estimatePrompt = %d, want %d", tools, got, want)
		}
	}
}

func BenchmarkEstimatePrompt(b *testing.B) {
	tokenizer.Warm()
	for _, tc := range []struct {
		name  string
		tools int
	}{{"8 tools", 8}, {"200 tools", 200}} {
		req := estimateRequest(tc.tools)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				estimatePrompt(req)
			}
		})
	}
}
