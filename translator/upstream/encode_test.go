package upstream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
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
		Model:    "svc-3",
		Messages: NewConversation(encodeMessages()...),
		Tools: []ToolDefinition{
			{Type: "function", Function: FunctionSpec{Name: "web_search", Description: "Search the web.", Parameters: schema}},
			{Type: "function", Function: FunctionSpec{Name: "remember", Parameters: json.RawMessage(`{"type":"object"}`)}},
		},
		Sampling: map[string]json.RawMessage{"temperature": json.RawMessage(`0.2`), "stop": json.RawMessage(`["\n\n"]`), "seed": json.RawMessage(`7`)},
	}
}

func encodeMessages() []Message {
	return []Message{
		{Role: "system", Content: "You are helpful.\nTools: web_search & friends </script>"},
		{Role: "user", Parts: []Part{{Type: "text", Text: "Hé \u2028 look"}, {Type: "image_url", ImageURL: &ImageURL{MIME: "image/png", Base64: "iVBORw0KGgo+/A=="}}}},
		{Role: "user", Parts: []Part{{Type: "text"}, {Type: "image_url", ImageURL: &ImageURL{MIME: "image/<x>", Base64: "not\"base64\n\xff"}}}},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: Function{Name: "web_search", Arguments: `{"query":"x"}`}}}},
		{Role: "assistant", Content: "Two at once.", ToolCalls: []ToolCall{
			{ID: "call_2", Type: "function", Function: Function{Name: "open_url", Arguments: "{\"url\":\"http://a/?b=1&c=<2>\"}"}},
			{ID: "call_3", Type: "function", Function: Function{Name: "remember", Arguments: "\xfe not JSON"}},
		}},
		{Role: "tool", ToolCallID: "call_1", Name: "web_search", Content: "result"},
		{Role: "tool", ToolCallID: "call_2", Content: ""},
	}
}

// legacyMessage is a message in the shape encoding/json marshalled
// before Conversation encoded messages by hand: the bytes the backend
// got then, which it must still get.
type legacyMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

type legacyPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

func legacyJSON(t testing.TB, ms []Message) []byte {
	t.Helper()
	out := make([]legacyMessage, len(ms))
	for i, m := range ms {
		out[i] = legacyMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Parts != nil {
			parts := make([]legacyPart, len(m.Parts))
			for j, p := range m.Parts {
				parts[j] = legacyPart{Type: p.Type, Text: p.Text}
				if p.ImageURL != nil {
					parts[j].ImageURL = &struct {
						URL string `json:"url"`
					}{URL: "data:" + p.ImageURL.MIME + ";base64," + p.ImageURL.Base64}
				}
			}
			out[i].Content = parts
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The conversation is encoded byte for byte as json.Marshal encoded the
// same messages, whether added at once or one at a time.
func TestConversationMatchesMarshal(t *testing.T) {
	ms := encodeMessages()
	want := legacyJSON(t, ms)
	if got := NewConversation(encodeMessages()...).JSON(); !bytes.Equal(got, want) {
		t.Errorf("conversation\n%s\nwant\n%s", got, want)
	}
	var c Conversation
	for i, m := range ms {
		c.Append(m)
		if got, want := c.JSON(), legacyJSON(t, ms[:i+1]); !bytes.Equal(got, want) {
			t.Fatalf("after %d messages:\n%s\nwant\n%s", i+1, got, want)
		}
	}
}

// A copy of a conversation, what a round's Request holds, keeps its
// messages while the original grows.
func TestConversationCopyKeepsItsMessages(t *testing.T) {
	ms := encodeMessages()
	c := NewConversation(ms[:2]...)
	round := c
	before := string(round.JSON())
	c.Append(ms[2:]...)
	if got := string(round.JSON()); got != before || round.Len() != 2 {
		t.Errorf("the copy changed to %d messages:\n%s", round.Len(), got)
	}
	if c.Len() != len(ms) {
		t.Errorf("the original has %d messages, want %d", c.Len(), len(ms))
	}
}

func FuzzConversation(f *testing.F) {
	f.Add("user", "hi", "text", "image/png", "AAAA", "call_1", "web_search", `{"q":1}`)
	f.Add("tool", "<&>\u2028", "", "", "\xff", "", "", "")
	f.Fuzz(func(t *testing.T, role, content, text, mime, b64, id, name, args string) {
		ms := []Message{
			{Role: role, Content: content, ToolCallID: id, Name: name},
			{Role: role, Parts: []Part{{Type: "text", Text: text}, {Type: "image_url", ImageURL: &ImageURL{MIME: mime, Base64: b64}}}},
			{Role: role, Content: content, ToolCalls: []ToolCall{{ID: id, Type: "function", Function: Function{Name: name, Arguments: args}}}},
		}
		want := legacyJSON(t, ms)
		long := slices.Clone(ms)
		long[0].Content = strings.Repeat(content, minTextOutOfLine/max(len(content), 1)+1)
		c := NewConversation(slices.Clone(ms)...)
		if got := c.JSON(); !bytes.Equal(got, want) {
			t.Fatalf("conversation\n%q\nwant\n%q", got, want)
		}
		// A text kept only encoded reads back as it was given.
		if got := NewConversation(slices.Clone(long)...).Messages(); !reflect.DeepEqual(got, long) {
			t.Fatalf("messages read back as\n%+v\nwant\n%+v", got, long)
		}
	})
}

// The hand-written body says exactly what json.Marshal of the same fields
// says, the messages byte for byte.
func TestEncodeMatchesMarshal(t *testing.T) {
	for _, tt := range []struct {
		name  string
		req   Request
		model string
	}{
		{name: "full", req: encodeRequest(), model: "served-model"},
		{name: "request's model, no tools, no sampling", req: Request{Model: "m", Messages: NewConversation(Message{Role: "user", Content: "hi"})}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := bytes.Join(new(Client).encode(tt.req, tt.model), nil)
			model := tt.model
			if model == "" {
				model = tt.req.Model
			}
			messages := legacyJSON(t, tt.req.Messages.Messages())
			if !bytes.Contains(got, append(append([]byte(`,"messages":`), messages...), `,"stream":true,`...)) {
				t.Errorf("the body does not hold the messages as json.Marshal wrote them:\n%s", got)
			}
			want := map[string]any{
				"model":          model,
				"messages":       json.RawMessage(messages),
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
		c.encode(req, "m")
	}
}

// A body with the tools encoded beforehand is the body without them,
// byte for byte, and sends those bytes as they are.
func TestEncodeWithToolsJSON(t *testing.T) {
	req := encodeRequest()
	if len(req.Tools) == 0 {
		t.Fatal("the request offers no tools")
	}
	want := bytes.Join(new(Client).encode(req, "m"), nil)
	req.ToolsJSON = EncodeTools(req.Tools)
	pieces := new(Client).encode(req, "m")
	if got := bytes.Join(pieces, nil); !bytes.Equal(got, want) {
		t.Errorf("with ToolsJSON the body is\n%s\nwant\n%s", got, want)
	}
	shared := false
	for _, p := range pieces {
		if len(p) > 0 && &p[0] == &req.ToolsJSON[0] {
			shared = true
		}
	}
	if !shared {
		t.Error("the body copies ToolsJSON instead of sending it")
	}
}
