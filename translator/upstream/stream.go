package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/sse"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// EventKind says what an Event carries.
type EventKind uint8

const (
	// EventContent is answer text.
	EventContent EventKind = iota
	// EventReasoning is reasoning text (reasoning_content, reasoning, or
	// a leading <think> block of content). Never shown to the client.
	EventReasoning
	// EventToolCall is a piece of a tool call: a new call, or more of
	// its arguments.
	EventToolCall
)

// Event is one meaningful piece of a backend's stream. Chunks
// that carry nothing (role-only, usage-only, empty deltas) produce none.
type Event struct {
	Kind EventKind
	// Text of EventContent and EventReasoning.
	Text string
	// ToolCall is the position of the call in ToolCalls (EventToolCall).
	ToolCall int
	// ArgsChars is how many argument characters the event added.
	ArgsChars int
}

// Stream is the answer to one round. It is not safe for
// concurrent use. Read it with Next until io.EOF, then read ToolCalls,
// FinishReason and Usage. Always Close it.
type Stream struct {
	upstream *Client
	resp     *http.Response
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    watchdogTimer
	idle     time.Duration
	request  Request // kept for PromptEstimate, counted only when asked
	sse      *sse.Reader
	isJSON   bool
	served   Served

	pending []Event
	think   thinkSplitter
	calls   toolCallAccumulator
	finish  string
	usage   *billing.Usage
	// usageFromTimings: usage is llama.cpp's timings, not a report.
	usageFromTimings bool
	sawDone          bool // [DONE] arrived
	ended            bool // nothing more to read
	closed           bool

	contentChars, reasoningChars, argsChars int

	beforeWait func() // see BeforeWait
}

// BeforeWait sets f to be called whenever Next is about to wait for the
// backend, having nothing read left: the moment for a relay to flush
// what it buffered, so that it writes as much at once as arrived at once
// and nothing waits in its buffer while the backend is silent.
func (s *Stream) BeforeWait(f func()) { s.beforeWait = f }

// Next returns the next event, io.EOF at the end of a complete answer,
// an *Error when the backend failed, or the context's cause
// when the caller's context ended.
func (s *Stream) Next() (Event, error) {
	for {
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending = s.pending[1:]
			return ev, nil
		}
		if s.ended {
			return Event{}, io.EOF
		}
		if err := s.fill(); err != nil {
			return Event{}, err
		}
	}
}

// fill reads until at least one event is pending or the stream ended.
func (s *Stream) fill() error {
	if s.isJSON {
		return s.readJSON()
	}
	if s.beforeWait != nil && !s.sse.Buffered() {
		s.beforeWait()
	}
	ev, err := s.sse.Next()
	if err == io.EOF {
		s.flushThink()
		s.ended = true
		if !s.sawDone && s.finish == "" {
			return &Error{Message: "stream ended before the answer was complete"}
		}
		return nil
	}
	if err != nil {
		return s.readError(err)
	}
	// From the first event on, the watchdog measures silence.
	s.timer.Reset(s.idle)
	if string(ev.Data) == "[DONE]" {
		s.sawDone = true
		s.flushThink()
		s.ended = true
		return nil
	}
	return s.chunk(ev.Data)
}

func (s *Stream) readError(err error) error {
	if cause := context.Cause(s.ctx); cause != nil {
		return s.upstream.failure(s.ctx, cause, err)
	}
	if errors.Is(err, sse.ErrLineTooLong) {
		return &Error{Message: "malformed stream", Err: err}
	}
	return &Error{Message: "stream broken", Err: err}
}

// wireChunk is a chat.completion.chunk as backends send it, with the
// fields in which they differ.
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// XGroq carries Groq's usage, which it sends nowhere else in a
	// stream.
	XGroq *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	// Timings is llama.cpp's account of a completion; builds before
	// mid-2024 report no usage but this.
	Timings *struct {
		PromptN    billing.TokenCount `json:"prompt_n"`
		PredictedN billing.TokenCount `json:"predicted_n"`
	} `json:"timings"`
}

type wireChoice struct {
	Index        int        `json:"index"`
	Delta        wireDelta  `json:"delta"`
	Message      *wireDelta `json:"message"` // a JSON answer's choice
	FinishReason *string    `json:"finish_reason"`
}

// wireUsage is a usage object. Its counts are billing.TokenCount, which
// reads what sloppy encoders send for an integer.
type wireUsage struct {
	PromptTokens            billing.TokenCount `json:"prompt_tokens"`
	CompletionTokens        billing.TokenCount `json:"completion_tokens"`
	CompletionTokensDetails *wireUsageDetails  `json:"completion_tokens_details"`
}

type wireUsageDetails struct {
	ReasoningTokens billing.TokenCount `json:"reasoning_tokens"`
}

type wireDelta struct {
	Content          *string       `json:"content"`
	ReasoningContent *string       `json:"reasoning_content"` // vLLM, DeepSeek, llama.cpp
	Reasoning        *string       `json:"reasoning"`         // Ollama, OpenRouter, newer vLLM
	ToolCalls        wireToolCalls `json:"tool_calls"`
	FunctionCall     *struct {     // legacy single function call
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function_call"`
}

func (s *Stream) chunk(data []byte) error {
	var c wireChunk
	if !decodeChunk(data, &c) {
		c = wireChunk{}
		if err := json.Unmarshal(data, &c); err != nil {
			return &Error{Message: "malformed stream chunk", Err: err}
		}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return &Error{Message: errorText(c.Error)}
	}
	if len(c.Choices) == 0 && c.Usage == nil {
		if msg, ok := bareError(data); ok {
			return &Error{Message: msg}
		}
	}
	s.readUsage(&c)
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		d := ch.Delta
		if ch.Message != nil {
			d = *ch.Message
		}
		if err := s.delta(d); err != nil {
			return err
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
	}
	return nil
}

// readUsage takes the usage a chunk reports: its usage member, or Groq's
// x_groq.usage, or else llama.cpp's timings, which give way to any usage
// reported before or after them.
func (s *Stream) readUsage(c *wireChunk) {
	u := c.Usage
	if u == nil && c.XGroq != nil {
		u = c.XGroq.Usage
	}
	if u == nil {
		if c.Timings != nil && (s.usage == nil || s.usageFromTimings) {
			r := billing.Usage{Prompt: int64(c.Timings.PromptN), Completion: int64(c.Timings.PredictedN)}.Normalized()
			s.usage, s.usageFromTimings = &r, true
		}
		return
	}
	r := billing.Usage{Prompt: int64(u.PromptTokens), Completion: int64(u.CompletionTokens)}
	if d := u.CompletionTokensDetails; d != nil {
		r.Reasoning = int64(d.ReasoningTokens)
	}
	// Nothing reads a report before it is normalised: a negative
	// count shown to the client, priced or counted by a metric is a
	// backend's fault turned into the gateway's.
	r = r.Normalized()
	// The last report wins: vLLM can report on every chunk.
	s.usage, s.usageFromTimings = &r, false
}

func (s *Stream) delta(d wireDelta) error {
	for _, r := range []*string{d.ReasoningContent, d.Reasoning} {
		if r != nil && *r != "" {
			s.addReasoning(*r)
		}
	}
	if d.Content != nil && *d.Content != "" {
		content, reasoning := s.think.split(*d.Content)
		s.addReasoning(reasoning)
		s.addContent(content)
	}
	for _, tc := range d.ToolCalls {
		if err := s.addToolCall(tc.Index, tc.ID, tc.Function.Name, argumentText(tc.Function.Arguments)); err != nil {
			return err
		}
	}
	if fc := d.FunctionCall; fc != nil {
		zero := 0
		return s.addToolCall(&zero, "", fc.Name, argumentText(fc.Arguments))
	}
	return nil
}

func (s *Stream) addContent(t string) {
	if t == "" {
		return
	}
	s.contentChars += utf8.RuneCountInString(t)
	s.pending = append(s.pending, Event{Kind: EventContent, Text: t})
}

func (s *Stream) addReasoning(t string) {
	if t == "" {
		return
	}
	s.reasoningChars += utf8.RuneCountInString(t)
	s.pending = append(s.pending, Event{Kind: EventReasoning, Text: t})
}

func (s *Stream) addToolCall(index *int, id, name, args string) error {
	pos, err := s.calls.add(index, id, name, args)
	if err != nil {
		return err
	}
	n := utf8.RuneCountInString(args)
	s.argsChars += n
	s.pending = append(s.pending, Event{Kind: EventToolCall, ToolCall: pos, ArgsChars: n})
	return nil
}

func (s *Stream) flushThink() {
	content, reasoning := s.think.flush()
	s.addReasoning(reasoning)
	s.addContent(content)
}

// readJSON handles a backend that answered a streaming request with one
// JSON chat.completion (some proxies and older servers do).
func (s *Stream) readJSON() error {
	b, err := io.ReadAll(io.LimitReader(s.resp.Body, 64<<20))
	if err != nil {
		return s.readError(err)
	}
	s.timer.Stop()
	if err := s.chunk(b); err != nil {
		return err
	}
	s.flushThink()
	s.ended = true
	if s.finish == "" {
		s.finish = "stop"
	}
	return nil
}

// ToolCalls returns the tool calls of the round, in order. Calls without
// a name are dropped: there is nothing to run.
func (s *Stream) ToolCalls() []ToolCall {
	var out []ToolCall
	for i, c := range s.calls.calls {
		c.Function.Arguments = s.calls.args[i].String()
		if c.Function.Name == "" {
			c.Function = unwrapNamedArguments(c.Function.Arguments)
		}
		if c.Function.Name != "" {
			out = append(out, c)
		}
	}
	return out
}

// FinishReason is the backend's finish reason, normalised: "function_call"
// becomes "tool_calls", and a round that produced tool calls is a
// tool-call round whatever the backend said (Ollama and some llama.cpp
// builds say "stop"). Empty for a stream that only ended with [DONE]
// means "stop".
func (s *Stream) FinishReason() string {
	if len(s.ToolCalls()) > 0 {
		return "tool_calls"
	}
	switch s.finish {
	case "", "function_call", "tool_calls", "eos", "eos_token", "stop_sequence":
		return "stop"
	}
	return s.finish
}

// Usage returns what the backend reported, normalised
// (billing.Usage.Normalized), or nil if it reported nothing.
// Reasoning is completion_tokens_details.reasoning_tokens when the
// backend reports it.
func (s *Stream) Usage() *billing.Usage { return s.usage }

// Served names the configured model and the backend that answered.
func (s *Stream) Served() Served { return s.served }

// Chars returns the characters of reasoning, answer text and tool-call
// arguments produced so far.
func (s *Stream) Chars() wire.Chars {
	return wire.Chars{Think: s.reasoningChars, Text: s.contentChars, Args: s.argsChars}
}

// PromptEstimate is an estimate of the round's prompt tokens, for
// backends that report no usage.
// Tokenizing a long conversation takes milliseconds, so it is done only
// for a round that needs it, not for every round.
func (s *Stream) PromptEstimate() int64 { return estimatePrompt(s.request) }

// EstimatePrompt is PromptEstimate for a round whose stream never
// opened: the request went out and the client left before the answer.
func EstimatePrompt(req Request) int64 { return estimatePrompt(req) }

// Close ends the round and releases its connection. After a complete
// stream the connection goes back to the pool for reuse.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.timer.Stop()
	if s.ended {
		// Drain what little may follow [DONE] so the connection is reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(s.resp.Body, 4<<10))
	}
	err := s.resp.Body.Close()
	s.cancel(nil)
	return err
}

// toolCallAccumulator joins tool-call deltas into calls. Backends split a
// call across chunks and identify the pieces by index; some omit the
// index and send each call whole, or identify calls by id only.
//
// Each call's arguments grow in a builder of their own, so joining n
// bytes costs O(n) whatever the size of the pieces: appending each piece
// to a string copied everything before it, O(n²) (a megabyte of
// arguments in 16-byte pieces took 16 s of CPU).
type toolCallAccumulator struct {
	calls   []ToolCall
	args    []*strings.Builder // the arguments of calls[i]
	byIndex map[int]int
	// max bounds the length of all arguments together (0 means
	// DefaultMaxArgumentBytes); total is that length.
	max, total int
}

// add joins a piece of a call and returns the call's position. It fails
// when the round's arguments would grow past a.max.
func (a *toolCallAccumulator) add(index *int, id, name, args string) (int, error) {
	limit := orDefault(a.max, DefaultMaxArgumentBytes)
	if a.total+len(args) > limit {
		return 0, &Error{Message: fmt.Sprintf("tool-call arguments longer than %d bytes", limit)}
	}
	a.total += len(args)
	pos := -1
	switch {
	case index != nil:
		if p, ok := a.byIndex[*index]; ok {
			pos = p
		}
	case len(a.calls) > 0:
		last := len(a.calls) - 1
		// Without an index, a new id (or a new name after a finished
		// call) starts a new call; anything else continues the last one.
		if !(id != "" && a.calls[last].ID != "" && a.calls[last].ID != id) &&
			!(id == "" && name != "" && a.calls[last].Function.Name != "") {
			pos = last
		}
	}
	if pos < 0 {
		pos = len(a.calls)
		a.calls = append(a.calls, ToolCall{Type: "function"})
		a.args = append(a.args, new(strings.Builder))
		if index != nil {
			if a.byIndex == nil {
				a.byIndex = make(map[int]int)
			}
			a.byIndex[*index] = pos
		}
	}
	c := &a.calls[pos]
	if c.ID == "" {
		c.ID = id
	}
	if c.Function.Name == "" {
		c.Function.Name = name
	}
	a.args[pos].WriteString(args)
	return pos, nil
}

// argumentText returns tool-call arguments as text: the string most
// backends send, or the raw JSON of an object some send instead.
func argumentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// bareError reads the error object itself sent as a chunk, without an
// error member, as vLLM before 0.7 sent an error mid-stream:
// {"object":"error","message":...}. Only a chunk without choices or
// usage is looked at.
func bareError(data []byte) (string, bool) {
	var e struct {
		Object  json.RawMessage `json:"object"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(data, &e) != nil || string(e.Object) != `"error"` {
		return "", false
	}
	var msg string
	if json.Unmarshal(e.Message, &msg) != nil || msg == "" {
		return "error event in stream", true
	}
	return clip.Ellipsis(msg, 500), true
}

// errorText extracts a message from an in-stream error value.
func errorText(raw json.RawMessage) string {
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return clip.Ellipsis(obj.Message, 500)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return clip.Ellipsis(s, 500)
	}
	return "error event in stream"
}

// DefaultCallID names a call the backend sent without an id.
func DefaultCallID(round, pos int) string {
	return "call_" + strconv.Itoa(round) + "_" + strconv.Itoa(pos)
}
