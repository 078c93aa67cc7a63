package demobackend

import (
	"encoding/json"
	"strings"
)

// ChatRequest is the decoded body of POST /v1/chat/completions. It holds
// the fields a gateway is expected to shape; Request.Body keeps the exact
// bytes for anything else.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *StreamOptions  `json:"stream_options,omitempty"`
	Tools               []Tool          `json:"tools,omitempty"`
	ToolChoice          json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	User                string          `json:"user,omitempty"`
	Metadata            map[string]any  `json:"metadata,omitempty"`

	rawFields map[string]json.RawMessage // every top-level field, for Has
}

// StreamOptions is the stream_options object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// ResponseFormat is the response_format object; Type is "text",
// "json_object" or "json_schema".
type ResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// Tool is one entry of tools.
type Tool struct {
	Type     string       `json:"type"`
	Function ToolFunction `json:"function"`
}

// ToolFunction describes a callable function.
type ToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Message is one entry of messages.
type Message struct {
	Role string `json:"role"`
	// Content is a JSON string, an array of content parts, or null. Use
	// Text and Parts to read it.
	Content          json.RawMessage   `json:"content,omitempty"`
	Name             string            `json:"name,omitempty"`
	ToolCalls        []MessageToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
}

// MessageToolCall is a tool call an assistant message carries back.
type MessageToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ContentPart is one element of an array content.
type ContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	} `json:"image_url,omitempty"`
}

// Text is the message's text: the string content, or its text parts
// joined with newlines.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var texts []string
	for _, p := range m.Parts() {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Parts is the array content, or nil when the content is a string or
// null.
func (m Message) Parts() []ContentPart {
	var parts []ContentPart
	if len(m.Content) == 0 || m.Content[0] != '[' {
		return nil
	}
	_ = json.Unmarshal(m.Content, &parts)
	return parts
}

// LastUserText is the text of the last message with role "user", or ""
// when there is none.
func (r *ChatRequest) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// HasTool reports whether a function tool called name was offered.
func (r *ChatRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// Has reports whether the request body carried the top-level field name,
// whatever its value; it tells an omitted field from a zero one.
func (r *ChatRequest) Has(name string) bool {
	_, ok := r.rawFields[name]
	return ok
}

// Field returns the raw JSON of the top-level field name, for fields that
// ChatRequest does not decode.
func (r *ChatRequest) Field(name string) (json.RawMessage, bool) {
	v, ok := r.rawFields[name]
	return v, ok
}

// maxCompletionTokens is the output limit the client asked for, 0 for
// none. max_completion_tokens supersedes the deprecated max_tokens.
func (r *ChatRequest) maxCompletionTokens() int {
	switch {
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	}
	return 0
}

func (r *ChatRequest) includeUsage() bool {
	return r.Stream && r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

func (r *ChatRequest) jsonMode() bool {
	return r.ResponseFormat != nil &&
		(r.ResponseFormat.Type == "json_object" || r.ResponseFormat.Type == "json_schema")
}
