package upstream

import (
	"encoding/json"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

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
	// texts[i], when not zero, is where messages[i]'s Content is in
	// encoded, as its JSON string; messages[i] then holds none.
	texts []span
}

// span is a part of a Conversation's encoded messages.
type span struct{ start, end int }

// minTextOutOfLine is the shortest Content a Conversation keeps only
// encoded. A conversation stays referenced for as long as the answer
// streams, and keeping its text twice, as given and as encoded, held
// the system prompt and the client's messages twice per open stream.
// The text is read again only for a prompt estimate (estimatePrompt),
// decoded from its JSON: exactly the text given, for valid UTF-8, which
// is all a message's text is kept out of line for.
const minTextOutOfLine = 128

// NewConversation returns the conversation of ms, which it takes over
// and may change: the caller must not use them afterwards. A request's
// first messages are its whole conversation as the client sent it, and
// a copy of them would be garbage as soon as made.
func NewConversation(ms ...Message) Conversation {
	c := Conversation{messages: ms[:len(ms):len(ms)], texts: make([]span, len(ms))}
	c.encoded = appendEncoded(nil, false, c.messages, c.texts)
	c.keepTextsOnce(0)
	return c
}

// NewConversationText is NewConversation with ms[0]'s Content given as
// text, the bytes of a buffer the caller keeps: the service's system
// prompt, written in a pooled buffer, is encoded from it without first
// becoming a string that would be garbage as soon as encoded (a KB or
// more per request). The text is read through a string that shares its
// bytes only while it is encoded; a text the conversation keeps as a
// string (short, or not valid UTF-8) is then copied.
func NewConversationText(text []byte, ms ...Message) Conversation {
	ms[0].Content = unsafe.String(unsafe.SliceData(text), len(text))
	c := NewConversation(ms...)
	if c.messages[0].Content != "" {
		c.messages[0].Content = string(text)
	}
	return c
}

// Append encodes ms and adds them to the conversation.
func (c *Conversation) Append(ms ...Message) {
	n := len(c.messages)
	c.messages = append(c.messages, ms...)
	c.texts = append(c.texts, make([]span, len(ms))...)
	c.encoded = appendEncoded(c.encoded, n > 0, c.messages[n:], c.texts[n:])
	c.keepTextsOnce(n)
}

// keepTextsOnce drops the Content of the messages from the i-th on that
// are kept only encoded (minTextOutOfLine), and forgets where the
// others' is.
func (c *Conversation) keepTextsOnce(i int) {
	for ; i < len(c.messages); i++ {
		m := &c.messages[i]
		if c.texts[i] != (span{}) && len(m.Content) >= minTextOutOfLine && utf8.ValidString(m.Content) {
			m.Content = ""
		} else {
			c.texts[i] = span{}
		}
	}
}

// content returns the Content of the i-th message.
func (c Conversation) content(i int) string {
	if t := c.texts[i]; t != (span{}) {
		var s string
		_ = json.Unmarshal(c.encoded[t.start:t.end], &s) // valid JSON: it was encoded so
		return s
	}
	return c.messages[i].Content
}

// Len returns the number of messages.
func (c Conversation) Len() int { return len(c.messages) }

// Messages returns a copy of the messages, their text included.
func (c Conversation) Messages() []Message {
	ms := slices.Clone(c.messages)
	for i := range ms {
		ms[i].Content = c.content(i)
	}
	return ms
}

// JSON returns the messages as a JSON array.
func (c Conversation) JSON() []byte {
	b := make([]byte, 0, len(c.encoded)+2)
	b = append(b, '[')
	b = append(b, c.encoded...)
	return append(b, ']')
}

// appendEncoded appends ms to enc, the first after a comma if more, and
// sets texts[i] to where in enc the i-th message's Content went, for a
// message without Parts.
//
// The messages are encoded in a buffer kept for the next ones and
// copied in at their size: a conversation stays referenced for as long
// as the answer streams, and grown by doubling from its first message
// (the system prompt, a KB or more) it left as much garbage and kept up
// to as much unused room. Messages too large for a kept buffer (an
// image's base64) are encoded in place, in room made for about their
// size.
func appendEncoded(enc []byte, more bool, ms []Message, texts []span) []byte {
	n := 0
	for i := range ms {
		n += encodedSize(&ms[i])
	}
	if n > maxScratch {
		return appendMessages(slices.Grow(enc, n), more, ms, texts)
	}
	scratch := scratchBuffers.Get().(*[]byte)
	b := appendMessages((*scratch)[:0], more, ms, texts)
	for i := range texts {
		if texts[i] != (span{}) {
			texts[i].start += len(enc)
			texts[i].end += len(enc)
		}
	}
	enc = append(slices.Grow(enc, len(b)), b...)
	if cap(b) <= maxScratch {
		*scratch = b
		scratchBuffers.Put(scratch)
	}
	return enc
}

func appendMessages(b []byte, more bool, ms []Message, texts []span) []byte {
	for i, m := range ms {
		if more || i > 0 {
			b = append(b, ',')
		}
		b, texts[i] = appendMessage(b, m)
	}
	return b
}

// scratchBuffers keeps the buffers messages are encoded in; maxScratch
// is the largest kept.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 16 << 10

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
func appendMessage(b []byte, m Message) (_ []byte, content span) {
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, m.Role)
	b = append(b, `,"content":`...)
	if m.Parts == nil {
		content.start = len(b)
		b = appendText(b, m.Content)
		content.end = len(b)
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
	return append(b, '}'), content
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
