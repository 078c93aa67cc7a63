package upstream

import (
	"slices"
	"sync"

	"github.com/switchyardhq/switchyard/internal/jsonstr"
)

// Conversation is the messages of a request's rounds, encoded in the
// backend's JSON once, as they are added: every round sends the whole
// conversation so far, and only the model's tool calls and the tools'
// answers are encoded for the next one. Encoding the whole again on each
// of up to eight rounds cost as much as the conversation is long, an
// inline image's base64 included, every round.
//
// The zero value is an empty conversation. A Conversation is not safe
// for concurrent use. A copy (what a Request holds) keeps the messages
// it had when it was made: Append on the original adds after them and
// never changes them, so a round's body stays what it was while the next
// is prepared. Append only to the Conversation the request owns, never
// to a copy.
type Conversation struct {
	encoded  []byte // the messages' JSON, comma-separated, without brackets
	messages []Message
}

// NewConversation returns the conversation of ms, which it takes over:
// the caller must not change them afterwards. A request's first
// messages are its whole conversation as the client sent it, and a copy
// of them would be garbage as soon as made.
func NewConversation(ms ...Message) Conversation {
	return Conversation{encoded: appendEncoded(nil, false, ms), messages: ms[:len(ms):len(ms)]}
}

// Append encodes ms and adds them to the conversation.
func (c *Conversation) Append(ms ...Message) {
	c.encoded = appendEncoded(c.encoded, len(c.messages) > 0, ms)
	c.messages = append(c.messages, ms...)
}

// appendEncoded appends ms to enc, the first after a comma if more.
//
// The messages are encoded in a buffer kept for the next ones and
// copied in at their size: a conversation stays referenced for as long
// as the answer streams, and grown by doubling from its first message
// (the system prompt, a KB or more) it left as much garbage and kept up
// to as much unused room. Messages too large for a kept buffer (an
// image's base64) are encoded in place, in room made for about their
// size.
func appendEncoded(enc []byte, more bool, ms []Message) []byte {
	n := 0
	for i := range ms {
		n += encodedSize(&ms[i])
	}
	if n > maxScratch {
		return appendMessages(slices.Grow(enc, n), more, ms)
	}
	scratch := scratchBuffers.Get().(*[]byte)
	b := appendMessages((*scratch)[:0], more, ms)
	enc = append(slices.Grow(enc, len(b)), b...)
	if cap(b) <= maxScratch {
		*scratch = b
		scratchBuffers.Put(scratch)
	}
	return enc
}

func appendMessages(b []byte, more bool, ms []Message) []byte {
	for i, m := range ms {
		if more || i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, m)
	}
	return b
}

// scratchBuffers keeps the buffers messages are encoded in; maxScratch
// is the largest kept.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 16 << 10

// Len returns the number of messages.
func (c Conversation) Len() int { return len(c.messages) }

// Messages returns the messages, for counting their tokens. The caller
// must not change them.
func (c Conversation) Messages() []Message { return c.messages[:len(c.messages):len(c.messages)] }

// JSON returns the messages as a JSON array.
func (c Conversation) JSON() []byte {
	b := make([]byte, 0, len(c.encoded)+2)
	b = append(b, '[')
	b = append(b, c.encoded...)
	return append(b, ']')
}

// encodedSize is about the size of m encoded, a little more for the
// escapes of its text.
func encodedSize(m *Message) int {
	text := func(s string) int { return len(s) + len(s)/16 }
	n := 48 + len(m.Role) + text(m.Content) + len(m.ToolCallID) + len(m.Name)
	for _, p := range m.Parts {
		n += 32 + len(p.Type) + text(p.Text)
		if p.ImageURL != nil {
			n += 48 + len(p.ImageURL.MIME) + len(p.ImageURL.Base64)
		}
	}
	for _, tc := range m.ToolCalls {
		n += 64 + len(tc.ID) + len(tc.Type) + len(tc.Function.Name) + text(tc.Function.Arguments)
	}
	return n
}

// appendMessage appends m as encoding/json wrote the message in the
// shape this package used to marshal, byte for byte: role, content (a
// string, or the array of parts), then tool_calls, tool_call_id and name
// when set. A test holds it to that.
func appendMessage(b []byte, m Message) []byte {
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, m.Role)
	b = append(b, `,"content":`...)
	if m.Parts == nil {
		b = appendText(b, m.Content)
	} else {
		b = append(b, '[')
		for i, p := range m.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = jsonstr.Append(b, p.Type)
			if p.Text != "" {
				b = append(b, `,"text":`...)
				b = appendText(b, p.Text)
			}
			if p.ImageURL != nil {
				b = append(b, `,"image_url":{"url":`...)
				b = appendDataURL(b, p.ImageURL.MIME, p.ImageURL.Base64)
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsonstr.Append(b, tc.ID)
			b = append(b, `,"type":`...)
			b = jsonstr.Append(b, tc.Type)
			b = append(b, `,"function":{"name":`...)
			b = jsonstr.Append(b, tc.Function.Name)
			b = append(b, `,"arguments":`...)
			b = appendText(b, tc.Function.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = jsonstr.Append(b, m.ToolCallID)
	}
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, m.Name)
	}
	return append(b, '}')
}

// appendDataURL appends the JSON string of data:<mime>;base64,<b64>.
// Standard base64 needs no escaping in JSON, so it is copied as it is,
// without the URL being built as a string first; anything else (which
// no validated image is) is escaped as encoding/json would.
func appendDataURL(b []byte, mime, b64 string) []byte {
	b = jsonstr.Append(b, "data:"+mime+";base64,")
	b = b[:len(b)-1] // the string goes on
	if plainBase64(b64) {
		b = append(b, b64...)
	} else {
		q := jsonstr.Append(nil, b64)
		b = append(b, q[1:len(q)-1]...)
	}
	return append(b, '"')
}

// plainBase64 reports whether s holds only characters of the standard
// base64 alphabet and padding.
func plainBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=':
		default:
			return false
		}
	}
	return true
}
