package demobackend

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Reply is an answer to a chat completion request: the demo answer
// (DemoReply), or one that Options.Answer supplies, which may also be a
// failure (an error status, a cut stream, a delay) for tests to meet.
// The same Reply is sent as one JSON document or as a stream, as the
// request asks. The zero value answers with empty content and
// finish_reason "stop".
type Reply struct {
	// Content is the assistant text. Streamed one token (see Tokens) per
	// chunk.
	Content string

	// Reasoning is streamed as reasoning_content deltas before Content,
	// as vLLM and DeepSeek do for reasoning models, and returned as
	// message.reasoning_content in a JSON answer. Default: empty, none.
	Reasoning string

	// ToolCalls are sent after Content. In a stream each call's first
	// delta carries its index, id, type and name with empty arguments; the
	// arguments follow in several deltas carrying only the index, the way
	// OpenAI and vLLM stream them.
	ToolCalls []ToolCall

	// FinishReason overrides the finish_reason. Default: "tool_calls" when
	// ToolCalls is set, "length" when the request's max_completion_tokens
	// (or max_tokens) cut the answer short, otherwise "stop".
	FinishReason string

	// Usage overrides the reported token counts. Default: nil, counted
	// with PromptTokens and Tokens. Any int is sent as it is, negative
	// or past any real context window, as a faulty backend might.
	Usage *Usage

	// UsageJSON, when set, is sent as the usage object verbatim, in place
	// of Usage: for shapes Usage cannot spell (fractions, exponents,
	// strings, details that contradict the totals). Default: nil.
	UsageJSON json.RawMessage

	// Status, when not 0 or 200, answers with this HTTP status and Body
	// instead of a completion, before any stream starts.
	Status int

	// Body is the raw error body sent with Status, e.g. an HTML page from
	// a failing proxy. Default: empty, OpenAI's error envelope for Status.
	Body string

	// Header is added to the response, whatever its status (e.g.
	// Retry-After, x-ratelimit-*). Default: nil.
	Header http.Header

	// Delay is waited before anything is sent, on top of the server's
	// TimeToFirstToken. The wait ends early if the client goes away.
	// Default: 0.
	Delay time.Duration

	// Disconnect closes the connection without sending a response.
	Disconnect bool

	// EarlyHints sends a 103 Early Hints response with a Link header
	// before the answer, as some proxies in front of backends do.
	EarlyHints bool

	// BreakAfter, when positive, cuts a stream after that many data
	// frames (the role chunk counts; [DONE] does not) by closing the
	// connection, so the client sees an unexpected EOF. A value past the
	// last chunk sends every chunk but no [DONE]. A JSON answer is cut
	// half way through its body instead. Default: 0, no break.
	BreakAfter int

	// BreakError, with BreakAfter, ends the stream at that point with an
	// error frame and [DONE] instead of closing the connection, the way
	// vLLM reports a failure during generation. Default: nil.
	BreakError *apierror.Error
}

// ToolCall is a function call the assistant makes.
type ToolCall struct {
	// ID of the call. Default: "call_" plus a number unique to the server.
	ID string
	// Name of the function.
	Name string
	// Arguments as the JSON text the model emits.
	Arguments string
}

// Usage is the usage object of a completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// ReasoningTokens, when positive, is reported as
	// completion_tokens_details.reasoning_tokens (already part of
	// CompletionTokens).
	ReasoningTokens int `json:"-"`
}
