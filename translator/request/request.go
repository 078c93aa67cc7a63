package request

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/tools"
)

// Request is a validated /v3/chat/completions or /v3/responses request,
// with the request headers that shape it already applied.
type Request struct {
	// Responses is true for a /v3/responses body (ParseResponses): the
	// answer takes the Responses API's form.
	Responses bool

	Model    string
	Messages []Message
	Stream   bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// Files is true when modalities include "files" (the default).
	Files bool
	// SkipSearch turns autonomous web search off (top level or extra_body).
	SkipSearch bool
	// Objects is the objects map by object id; nil when not sent.
	Objects map[string]tools.ObjectRef
	// EndUser is X-User-Id, else the body's user; empty when neither.
	EndUser string
	// UserName is X-User-Name, else extra_body.user_name.
	UserName string
	// SessionID is X-Session-Id.
	SessionID string
	// Location is the X-Timezone zone; nil when the header was absent.
	Location *time.Location
	// Progress is false when X-Progress-Stream: 0 asked for a bare stream.
	Progress bool
	// IncludeCost is true with X-Include-Cost: 1.
	IncludeCost bool
	// Sampling holds the OpenAI sampling parameters the client set
	// (temperature, top_p, seed, stop, presence_penalty,
	// frequency_penalty), passed to the upstream unchanged.
	Sampling map[string]json.RawMessage
	// MaxTokens is the completion-token bound the client set, read only
	// with Limits.Strict to size the request's hold; 0 when unset. It is
	// not sent upstream.
	MaxTokens int64
	// SystemShortened is true when Revision A cut the system messages to
	// fit the system budget.
	SystemShortened bool
}

// Message is one message of the client's conversation.
type Message struct {
	Role  string // RoleSystem, RoleDeveloper, RoleUser or RoleAssistant
	Parts []Part
}

// Roles accepted in messages.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// IsSystem reports whether m gives instructions (system or developer).
func (m Message) IsSystem() bool { return m.Role == RoleSystem || m.Role == RoleDeveloper }

// Text joins the message's text parts.
func (m Message) Text() string {
	n, texts := 0, 0
	var only string
	for _, p := range m.Parts {
		if p.Kind == PartText {
			n += len(p.Text)
			texts++
			only = p.Text
		}
	}
	// A message of one text part, nearly every one, is that text: no
	// copy of it for each of the several times a request reads it.
	if texts <= 1 {
		return only
	}
	var b strings.Builder
	b.Grow(n + texts - 1)
	first := true
	for _, p := range m.Parts {
		if p.Kind != PartText {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
		first = false
	}
	return b.String()
}

// PartKind is the kind of a content part.
type PartKind uint8

const (
	PartText  PartKind = iota // {type:"text", text}
	PartFile                  // {type:"input_file", file_id}
	PartImage                 // {type:"image_url", image_url:{url:"data:..."}}
)

// Part is one content part. A string content is one text part.
type Part struct {
	Kind   PartKind
	Text   string       // PartText
	FileID string       // PartFile
	Image  *tools.Image // PartImage, checked and kept as base64
}
