package testupstream

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Reply is one scripted answer to a chat completion request. The same
// Reply is sent as one JSON document or as a stream, as the request asks.
// The zero value answers with empty content and finish_reason "stop".
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

// ToolCall is a function call the scripted assistant makes.
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

// Text is a Reply with content s.
func Text(s string) Reply { return Reply{Content: s} }

// ToolCalls is a Reply that calls the given tools.
func ToolCalls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error is a Reply with HTTP status and body (OpenAI's envelope for
// status when body is empty).
func Error(status int, body string) Reply { return Reply{Status: status, Body: body} }

// Responder decides the reply to a chat request; ok false leaves the
// request to the next rule.
type Responder func(req *Request) (r Reply, ok bool)

// Enqueue appends replies to the queue. Each chat completion request that
// no Match or Respond rule answers takes the next reply; when the queue is
// empty the demo answer is sent.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Match answers every chat request for which pred is true with r, ahead
// of the queue. Rules are tried in the order they were added.
func (s *Server) Match(pred func(*Request) bool, r Reply) {
	s.Respond(func(req *Request) (Reply, bool) { return r, pred(req) })
}

// Respond adds a rule that computes replies, ahead of the queue.
func (s *Server) Respond(fn Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, fn)
}

// Pending is the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Reset drops queued replies, rules, recorded requests and served
// completions.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.rules, s.requests, s.served = nil, nil, nil, nil
}

// pick chooses the reply for req; ok false means no script applies.
func (s *Server) pick(req *Request) (r Reply, ok bool) {
	s.mu.Lock()
	rules := s.rules
	s.mu.Unlock()
	// Rules run unlocked so that a Responder may call back into s.
	for _, fn := range rules {
		if r, ok := fn(req); ok {
			return r, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Reply{}, false
	}
	r = s.queue[0]
	s.queue = s.queue[1:]
	return r, true
}

// Predicates for Match.

// LastUserContains matches requests whose last user message contains
// substr.
func LastUserContains(substr string) func(*Request) bool {
	return func(r *Request) bool {
		return r.Chat != nil && strings.Contains(r.Chat.LastUserText(), substr)
	}
}

// ToolOffered matches requests that offer the function tool name.
func ToolOffered(name string) func(*Request) bool {
	return func(r *Request) bool { return r.Chat != nil && r.Chat.HasTool(name) }
}

// LastRole matches requests whose last message has the given role, e.g.
// "tool" for the round after a tool call.
func LastRole(role string) func(*Request) bool {
	return func(r *Request) bool {
		return r.Chat != nil && len(r.Chat.Messages) > 0 && r.Chat.Messages[len(r.Chat.Messages)-1].Role == role
	}
}
