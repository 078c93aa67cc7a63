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
func estimateRequest(tools, turns int) Request {
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
	for i := range turns {
		ms = append(ms,
			Message{Role: "assistant", Content: strings.Repeat("Wear a coat; it's 7 °C and windy. \u2028 <b>&</b> ", 10+i)},
			Message{Role: "user", Content: strings.Repeat("Thanks! And tomorrow? \"quoted\" \t tab 😀 中文 ", 8+i)})
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
		for _, turns := range []int{0, 3, 40} {
			req := estimateRequest(tools, turns)
			if got, want := estimatePrompt(req), estimatePromptByAdd(req); got != want {
				t.Errorf("%d tools, %d turns: estimatePrompt = %d, want %d", tools, turns, got, want)
			}
		}
	}
}

func BenchmarkEstimatePrompt(b *testing.B) {
	tokenizer.Warm()
	for _, tc := range []struct {
		name  string
		tools int
		turns int
	}{{"8 tools", 8, 0}, {"200 tools", 200, 0}, {"40 turns", 8, 40}} {
		req := estimateRequest(tc.tools, tc.turns)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				estimatePrompt(req)
			}
		})
	}
}

// decodedLen is the length of what encoding/json decodes, for the texts
// a conversation keeps and for JSON it would never write.
func TestDecodedLen(t *testing.T) {
	texts := []string{"", "a", `"`, `\`, "é中😀", "\u2028\u2029<>&", "\x00\x1f\t\n\r\b\f", "\xff\xfe bad \xc3"}
	for _, s := range texts {
		long := strings.Repeat(s+" padding ", 20)
		c := NewConversation(Message{Role: "user", Content: long})
		if tx := c.texts[0]; tx != (span{}) {
			if got, want := decodedLen(c.encoded[tx.start:tx.end]), len(c.content(0)); got != want {
				t.Errorf("%q: decodedLen = %d, decoded %d bytes", s, got, want)
			}
		}
		encoded, _ := json.Marshal(long)
		if got := decodedLen(encoded); got != decodedByJSON(t, encoded) {
			t.Errorf("%q marshalled: decodedLen = %d, want %d", s, got, decodedByJSON(t, encoded))
		}
	}
	for _, raw := range []string{
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ude00\ud83d"`, `"\ud83d\ud83d\ude00"`,
		`"\u00e9\u00E9\uFFFF\u0000"`, `"\/\"\\"`, "\"\xff\xc3\xa9\xe4\xb8\"", `"\uD83D\uDE00 tail"`,
	} {
		if got, want := decodedLen([]byte(raw)), decodedByJSON(t, []byte(raw)); got != want {
			t.Errorf("%s: decodedLen = %d, want %d", raw, got, want)
		}
	}
}

// Malformed JSON, which a conversation never keeps, is counted somehow
// rather than ending the process.
func TestDecodedLenMalformed(t *testing.T) {
	for _, raw := range []string{"", `"`, `"\"`, `"\u12"`, `"\uzzzz"`, `"\ud83d\u`} {
		decodedLen([]byte(raw))
	}
}

func decodedByJSON(t *testing.T, b []byte) int {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return len(s)
}
