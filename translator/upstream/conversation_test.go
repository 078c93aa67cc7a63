package upstream

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/tokenizer"
)

// A conversation takes its first messages over without a copy, and what
// is appended later never lands in the room the caller's slice had
// spare.
func TestNewConversationKeepsTheCallersSpareRoom(t *testing.T) {
	ms := make([]Message, 1, 4)
	ms[0] = Message{Role: "system", Content: "Be brief.\nAlways."}
	c := NewConversation(ms...)
	c.Append(Message{Role: "user", Content: "hi"})
	if spare := ms[:2][1]; spare.Role != "" {
		t.Errorf("Append wrote into the caller's spare room: %+v", spare)
	}
	want := `[{"role":"system","content":"Be brief.\nAlways."},{"role":"user","content":"hi"}]`
	if got := string(c.JSON()); got != want || c.Len() != 2 {
		t.Errorf("conversation = %s (%d messages), want %s", got, c.Len(), want)
	}
}

// A long text is kept only encoded, and read back exactly as given: the
// prompt estimate counts the same text as before, whatever it holds.
func TestConversationKeepsLongTextOnce(t *testing.T) {
	long := strings.Repeat("Line one, \"quoted\" <b> & é \u2028 tab\there.\n", 8)
	invalid := strings.Repeat("x", 200) + "\xff"
	ms := []Message{
		{Role: "system", Content: long},
		{Role: "user", Content: "short"},
		{Role: "user", Content: invalid},
		{Role: "user", Parts: []Part{{Type: "text", Text: long}}},
	}
	c := NewConversation(slices.Clone(ms)...)
	c.Append(Message{Role: "tool", ToolCallID: "call_1", Content: long})
	ms = append(ms, Message{Role: "tool", ToolCallID: "call_1", Content: long})

	for i, kept := range []bool{true, false, false, false, true} {
		if got := c.messages[i].Content == "" && ms[i].Content != ""; got != kept {
			t.Errorf("message %d kept only encoded: %v, want %v", i, got, kept)
		}
	}
	if got := c.Messages(); !reflect.DeepEqual(got, ms) {
		t.Errorf("Messages() = %+v, want %+v", got, ms)
	}
	if got, want := string(c.JSON()), string(NewConversation(slices.Clone(ms)...).JSON()); got != want {
		t.Errorf("appended one at a time:\n%s\nwant\n%s", got, want)
	}

	var text tokenizer.Counter
	for _, m := range ms {
		text.Add(m.Content)
		for _, p := range m.Parts {
			text.Add(p.Text)
		}
	}
	if got, want := estimatePrompt(Request{Messages: c}), int64(len(ms))*tokensPerMessage+text.Tokens(); got != want {
		t.Errorf("estimatePrompt = %d, want %d", got, want)
	}
}

// A system prompt given as the bytes of a buffer encodes as the same
// text given as a string, and whatever the conversation keeps of it
// stays what it was when the buffer is used again.
func TestNewConversationTextOwnsWhatItKeeps(t *testing.T) {
	long := strings.Repeat("Rules, \"quoted\" <b> & é \u2028 tab\there.\n", 8)
	for _, text := range []string{long, "Be brief.", strings.Repeat("x", 200) + "\xff", ""} {
		buf := []byte(text)
		ms := []Message{{Role: "system"}, {Role: "user", Content: "hi"}}
		c := NewConversationText(buf, ms...)
		want := NewConversation(Message{Role: "system", Content: text}, Message{Role: "user", Content: "hi"})
		for i := range buf {
			buf[i] = '!'
		}
		if got, want := string(c.JSON()), string(want.JSON()); got != want {
			t.Errorf("%.20q: encoded\n%s\nwant\n%s", text, got, want)
		}
		if got := c.Messages()[0].Content; got != text {
			t.Errorf("%.20q: the system message reads back as %.20q", text, got)
		}
	}
	buf := []byte(long)
	asText := testing.AllocsPerRun(100, func() { _ = NewConversationText(buf, make([]Message, 1)...) })
	asString := testing.AllocsPerRun(100, func() {
		_ = NewConversation(append(make([]Message, 0, 1), Message{Role: "system", Content: string(buf)})...)
	})
	if asText >= asString {
		t.Errorf("the text as bytes takes %.0f allocations, as a string %.0f", asText, asString)
	}
}
