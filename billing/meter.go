package billing

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/jsonscan"
	"github.com/switchyardhq/switchyard/internal/mediatype"
	"github.com/switchyardhq/switchyard/internal/sse"
	"github.com/switchyardhq/switchyard/internal/tokenizer"
)

// Meter reads the usage an OpenAI-compatible backend reports in a /v1
// response as it passes through: the "usage" object of a JSON answer, or
// of the final chunk of an event stream (chat and legacy completions'
// prompt_tokens / completion_tokens, or the Responses API's input_tokens
// / output_tokens). It is created per response and is not safe for
// concurrent use.
//
// Whether the answer is a stream is decided by its Content-Type, not by
// what the request asked: every text/event-stream answer is metered as
// one. A stream whose client did not ask for usage was asked for it on
// the client's behalf (V1Request.DropUsage); the meter then leaves the
// usage-only chunk out, so the client sees the stream it asked for.
//
// Memory is bounded whatever the backend sends: a JSON answer is kept
// whole up to MaxMeteredJSON and beyond that only its tail, where the
// usage object stands; a stream is parsed event by event.
type Meter struct {
	dropUsage bool
	stream    bool
	broken    bool // the stream broke the parser's limits: pass the rest through unmetered
	parser    sse.Parser

	json    []byte // a JSON answer, or its tail once it outgrew MaxMeteredJSON
	bytes   int64  // bytes of the answer seen
	clipped bool   // json holds only the tail

	usage        Usage
	found        bool
	fed, emitted int64  // stream bytes given to the parser, and in events it emitted
	content      []byte // the first tokenizer.DefaultBudget bytes of answer text streamed, for an estimate
	contentBytes int64  // bytes of answer text streamed

	// Chunks that cannot carry usage matter only for an estimate, which a
	// backend that reports usage never needs: their data waits here,
	// undecoded, up to maxDeferred bytes, and is read (in order, before
	// any later chunk) only if an estimate is wanted.
	deferred      [][]byte
	deferredBytes int

	price   func(Usage) int64 // ShowCost: the usage the client sees carries cost_cents
	holding bool              // a JSON answer is held to add its cost (holdJSON)
	usageAt usagePlace        // where the event just read carries the usage
}

// maxDeferred bounds the chunk data a Meter keeps undecoded.
const maxDeferred = 32 << 10

// deferredChunks is how many deferred chunks a Meter first makes room for.
const deferredChunks = 16

// deferChunks turns the deferral off, for tests that compare with it.
var deferChunks = true

// MaxMeteredJSON bounds how much of a JSON answer is kept to read its
// usage; a larger answer keeps its last MaxMeteredJSON bytes.
const MaxMeteredJSON = 1 << 20

// NewMeter returns a meter for a response to a request that dropUsage
// describes (V1Request.DropUsage).
func NewMeter(dropUsage bool) *Meter {
	m := new(Meter)
	m.Init(dropUsage)
	return m
}

// Init makes m what NewMeter returns, in place: for a caller that keeps
// the meter in a value of its own.
func (m *Meter) Init(dropUsage bool) {
	*m = Meter{dropUsage: dropUsage}
	m.parser.KeepRaw = dropUsage
}

// Streamed reports whether the answer is an event stream.
func (m *Meter) Streamed() bool { return m.stream }

// Start is called with the final response's Content-Type before Write.
func (m *Meter) Start(contentType string) {
	m.stream = mediatype.Of(contentType) == "text/event-stream"
}

// Write takes the next bytes of the response and returns what to send to
// the client now: p itself, or for a stream whose usage chunk is left
// out, the complete events of p and before it, without that chunk.
func (m *Meter) Write(p []byte) []byte {
	m.bytes += int64(len(p))
	if !m.stream {
		if m.price != nil {
			return m.holdJSON(p)
		}
		m.keepJSON(p)
		return p
	}
	if m.broken {
		return p
	}
	var out []byte
	m.fed += int64(len(p))
	err := m.parser.Feed(p, func(ev sse.Event) error {
		m.emitted += int64(len(ev.Raw))
		if m.readEvent(ev.Data) && m.dropUsage {
			return nil
		}
		out = appendRelayed(out, m.relayed(ev))
		return nil
	})
	if err != nil {
		// A line or event beyond the parser's bounds: stop metering and
		// relay the rest untouched: what the parser held, then what it
		// had not read of p.
		m.broken = true
		if m.rewrites() {
			unread := m.fed - m.parser.Consumed(m.emitted)
			out = append(out, m.parser.Held()...)
			return append(out, p[int64(len(p))-unread:]...)
		}
	}
	if !m.rewrites() {
		return p
	}
	return out
}

// Close ends the response and returns what is still to be sent: the end
// of a stream that came without a final line ending or blank line, or a
// JSON answer held to show its cost (ShowCost).
func (m *Meter) Close() []byte {
	if !m.stream && m.price != nil {
		return m.closeJSON()
	}
	if !m.stream || m.broken {
		return nil
	}
	var out []byte
	rest, _ := m.parser.Close(func(ev sse.Event) error {
		if m.readEvent(ev.Data) && m.dropUsage {
			return nil
		}
		out = appendRelayed(out, m.relayed(ev))
		return nil
	})
	if !m.rewrites() {
		return nil
	}
	return append(out, rest...)
}

// appendRelayed adds the bytes relayed of an event to what Write or
// Close returns: the event's own bytes when they come first, as the
// parser gives every event bytes of its own (sse.Event.Raw) and lets go
// of them, else a copy after the others.
func appendRelayed(out, relayed []byte) []byte {
	if out == nil {
		return relayed[:len(relayed):len(relayed)]
	}
	return append(out, relayed...)
}

func (m *Meter) keepJSON(p []byte) {
	if len(m.json)+len(p) <= MaxMeteredJSON {
		m.json = append(m.json, p...)
		return
	}
	m.clipped = true
	if len(p) >= MaxMeteredJSON {
		m.json = append(m.json[:0], p[len(p)-MaxMeteredJSON:]...)
		return
	}
	drop := len(m.json) + len(p) - MaxMeteredJSON
	m.json = append(m.json[:copy(m.json, m.json[drop:])], p...)
}

// wireUsage is the usage object of every answer shape of the routes the
// meter serves.
type wireUsage struct {
	PromptTokens     *TokenCount `json:"prompt_tokens"`
	CompletionTokens *TokenCount `json:"completion_tokens"`
	InputTokens      *TokenCount `json:"input_tokens"`
	OutputTokens     *TokenCount `json:"output_tokens"`
}

// counts returns the usage w reports, normalised (Usage.Normalized).
func (w *wireUsage) counts() (Usage, bool) {
	switch {
	case w == nil:
		return Usage{}, false
	case w.PromptTokens != nil || w.CompletionTokens != nil:
		return Usage{Prompt: deref(w.PromptTokens), Completion: deref(w.CompletionTokens)}.Normalized(), true
	case w.InputTokens != nil || w.OutputTokens != nil:
		return Usage{Prompt: deref(w.InputTokens), Completion: deref(w.OutputTokens)}.Normalized(), true
	}
	return Usage{}, false
}

// decodeUsage reads a usage object as encoding/json would into a
// *wireUsage, without it when the object is plain: member names spelled
// as the wire spells them and integer or null values. Anything else, a
// name in another case, a number with a fraction, goes to encoding/json.
func decodeUsage(v []byte) (Usage, bool) {
	var n [4]TokenCount
	var set [4]bool
	plain := jsonscan.Members(v, func(key, value []byte) bool {
		i := usageField(key)
		if i < 0 {
			return !mayNameUsageField(key)
		}
		if string(value) == "null" {
			set[i] = false
			return true
		}
		x, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil {
			return false
		}
		n[i], set[i] = TokenCount(x), true
		return true
	})
	if !plain {
		var u *wireUsage
		if json.Unmarshal(v, &u) != nil {
			return Usage{}, false
		}
		return u.counts()
	}
	field := func(i int) *TokenCount {
		if set[i] {
			return &n[i]
		}
		return nil
	}
	w := wireUsage{PromptTokens: field(0), CompletionTokens: field(1), InputTokens: field(2), OutputTokens: field(3)}
	return w.counts()
}

// usageFields are wireUsage's names, in the order decodeUsage counts them.
var usageFields = [...]string{`"prompt_tokens"`, `"completion_tokens"`, `"input_tokens"`, `"output_tokens"`}

func usageField(key []byte) int {
	for i, f := range usageFields {
		if string(key) == f {
			return i
		}
	}
	return -1
}

// mayNameUsageField reports whether encoding/json might match key, a
// quoted member name, to one of wireUsage's fields: it matches names
// without regard to case, escapes included.
func mayNameUsageField(key []byte) bool { return mayNameField(key, usageFields[:]) }

// mayNameField reports whether encoding/json might match key, a quoted
// member name, to one of names (quoted too).
func mayNameField(key []byte, names []string) bool {
	if bytes.IndexByte(key, '\\') >= 0 || bytes.ContainsFunc(key, func(r rune) bool { return r >= 0x80 }) {
		return true
	}
	for _, f := range names {
		if bytes.EqualFold(key, []byte(f)) {
			return true
		}
	}
	return false
}

func deref(p *TokenCount) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// readEvent notes what one stream event says and reports whether it is
// a usage-only chunk (usage and no choices), the one the client may not
// have asked for.
func (m *Meter) readEvent(data []byte) (usageOnly bool) {
	m.usageAt = usageNowhere
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	if deferChunks && !mayCarryUsage(data) {
		if m.found {
			return false // its text would only feed an estimate that is not needed
		}
		if m.deferredBytes+len(data) <= maxDeferred {
			if m.deferred == nil {
				// Room for a short answer's chunks at once, rather
				// than an allocation at each doubling from one.
				m.deferred = make([][]byte, 0, deferredChunks)
			}
			m.deferred = append(m.deferred, data) // the parser gives each event its own Data
			m.deferredBytes += len(data)
			return false
		}
	}
	if u, ok := plainUsageChunk(data); ok {
		m.usage, m.found = u, true
		m.deferred, m.deferredBytes = nil, 0
		m.usageAt = usageInChunk
		return true
	}
	var c streamChunk
	if json.Unmarshal(data, &c) != nil {
		return false
	}
	if u, inChunk, ok := c.usage(); ok {
		// The usage makes every estimate moot: what waits undecoded, a
		// whole answer's chunks when the usage comes last, never is.
		m.usage, m.found = u, true
		m.deferred, m.deferredBytes = nil, 0
		m.usageAt = usageInResponse
		if inChunk {
			m.usageAt = usageInChunk
		}
		return inChunk && len(c.Choices) == 0
	}
	m.readDeferred()
	m.keepChunkContent(&c)
	return false
}

// plainUsageChunk reads a Chat Completions usage chunk as readEvent
// would with encoding/json, without it (which took 12 allocations per
// chunk): a valid object whose "usage" is a usage object, whose
// "choices" is empty or null, and whose other members' names cannot be
// matched to a streamChunk field, in any case or spelling. Any other
// event reports false and goes to encoding/json; FuzzPlainUsageChunk
// holds the two to the same answers.
func plainUsageChunk(data []byte) (Usage, bool) {
	var usage []byte
	plain := jsonscan.ValidMembers(data, func(key, value []byte) bool {
		switch string(key) {
		case `"usage"`:
			if usage != nil {
				return false // encoding/json merges repeated objects
			}
			usage = value
			return true
		case `"choices"`:
			// Elements calls f only for an element: false for any.
			return string(value) == "null" || jsonscan.Elements(value, func([]byte) bool { return false })
		}
		return !mayNameField(key, chunkFields[:])
	})
	if !plain || usage == nil || usage[0] != '{' {
		return Usage{}, false
	}
	return decodeUsage(usage)
}

// chunkFields are streamChunk's member names.
var chunkFields = [...]string{`"choices"`, `"usage"`, `"response"`, `"delta"`, `"x_groq"`, `"timings"`}

// readDeferred decodes the chunks deferred so far.
func (m *Meter) readDeferred() {
	for _, d := range m.deferred {
		var c streamChunk
		if json.Unmarshal(d, &c) == nil {
			m.keepChunkContent(&c)
		}
	}
	m.deferred, m.deferredBytes = nil, 0
}

// mayCarryUsage reports whether encoding/json could find a usage object in
// data: false only when no key that matches "usage", "response" or
// "timings" (llama.cpp's counts; as encoding/json matches keys, without
// regard to case) can be in it with an object for its value. It errs on
// the side of true. Every Responses event names "response." in its type;
// only the few whose "response" is an object are decoded at once.
func mayCarryUsage(data []byte) bool {
	if bytes.Contains(data, []byte(`\u`)) || bytes.Contains(data, []byte("\u017f")) || bytes.Contains(data, []byte("\u212a")) {
		return true // an escaped key, or a rune encoding/json folds to s or k
	}
	return keyedObject(data, "response") || keyedObject(data, "usage") || keyedObject(data, "timings")
}

// keyedObject reports whether data has key (in any case) followed by a
// quote, a colon and an object.
func keyedObject(data []byte, key string) bool {
	for i := 0; ; {
		j := foldIndex(data[i:], key)
		if j < 0 {
			return false
		}
		k := i + j + len(key)
		if k < len(data) && data[k] == '"' {
			k++
			for k < len(data) && isSpace(data[k]) {
				k++
			}
			if k < len(data) && data[k] == ':' {
				k++
				for k < len(data) && isSpace(data[k]) {
					k++
				}
				if k < len(data) && data[k] == '{' {
					return true
				}
			}
		}
		i = k
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// foldIndex is the index of word (lower-case ASCII) in data, ASCII
// letters matched without regard to case, or -1.
func foldIndex(data []byte, word string) int {
	for i := 0; i+len(word) <= len(data); i++ {
		if data[i]|0x20 != word[0] {
			continue
		}
		j := 1
		for j < len(word) && data[i+j]|0x20 == word[j] {
			j++
		}
		if j == len(word) {
			return i
		}
	}
	return -1
}

// streamChunk is what the meter reads of one stream event.
type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
			// Reasoning and tool-call arguments are generated tokens
			// too: an estimate that left them out would bill a
			// tool-call round as nothing.
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		Text string `json:"text"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	// Responses API events carry the usage in the final response.
	Response *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"response"`
	Delta string `json:"delta"`
	// Groq reports a stream's usage only under x_groq.
	XGroq *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	// llama.cpp builds before mid-2024 report only timings.
	Timings *struct {
		PromptN    *TokenCount `json:"prompt_n"`
		PredictedN *TokenCount `json:"predicted_n"`
	} `json:"timings"`
}

// usage returns the chunk's usage and whether it is the chunk's own (a
// Chat Completions usage chunk) rather than its response's, Groq's or
// llama.cpp's timings.
func (c *streamChunk) usage() (u Usage, inChunk, ok bool) {
	if u, ok := c.Usage.counts(); ok {
		return u, true, true
	}
	if c.Response != nil {
		if u, ok = c.Response.Usage.counts(); ok {
			return u, false, true
		}
	}
	if c.XGroq != nil {
		if u, ok = c.XGroq.Usage.counts(); ok {
			return u, false, true
		}
	}
	if t := c.Timings; t != nil && (t.PromptN != nil || t.PredictedN != nil) {
		return Usage{Prompt: deref(t.PromptN), Completion: deref(t.PredictedN)}.Normalized(), false, true
	}
	return Usage{}, false, false
}

func (m *Meter) keepChunkContent(c *streamChunk) {
	for _, ch := range c.Choices {
		m.keepContent(ch.Delta.Content)
		m.keepContent(ch.Delta.ReasoningContent)
		m.keepContent(ch.Delta.Reasoning)
		m.keepContent(toolCallArguments(ch.Delta.ToolCalls))
		m.keepContent(ch.Text)
	}
	m.keepContent(c.Delta)
}

// toolCallArguments returns the arguments of delta.tool_calls, an array
// of calls or (Text Generation Inference 2) one call, or the raw JSON
// when it is neither.
func toolCallArguments(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	type call struct {
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	var calls []call
	if json.Unmarshal(raw, &calls) != nil {
		var one call
		if json.Unmarshal(raw, &one) != nil {
			return string(raw)
		}
		calls = []call{one}
	}
	var b []byte
	for _, c := range calls {
		b = append(b, c.Function.Name...)
		var s string
		if json.Unmarshal(c.Function.Arguments, &s) == nil {
			b = append(b, s...)
		} else {
			b = append(b, c.Function.Arguments...)
		}
	}
	return string(b)
}

// Usage returns the token counts the backend reported, normalised
// (Usage.Normalized), or, when it reported none, an estimate with
// Estimated set: for a stream that broke off, the answer streamed so
// far; for a JSON answer without a readable usage object, its size. The
// prompt of an estimate is 0: the caller estimates it from the request
// (EstimatePromptTokens).
func (m *Meter) Usage() Usage { return m.usageRead().Normalized() }

func (m *Meter) usageRead() Usage {
	if m.stream {
		if m.found {
			return m.usage
		}
		m.readDeferred()
		var c tokenizer.Counter
		c.AddText(m.content)
		c.AddBytes(m.contentBytes - int64(len(m.content)))
		return Usage{Completion: c.Tokens(), Estimated: true}
	}
	if u, ok := jsonUsage(m.json, m.clipped); ok {
		return u
	}
	// The whole answer, framing included, as the tokens it would take.
	var c tokenizer.Counter
	c.AddText(m.json)
	c.AddBytes(m.bytes - int64(len(m.json)))
	return Usage{Completion: c.Tokens(), Estimated: true}
}

// keepContent notes answer text streamed. Its tokens are counted only if
// the backend reports no usage, so only what an estimate tokenizes is
// kept: the rest is counted by its length.
func (m *Meter) keepContent(text string) {
	m.contentBytes += int64(len(text))
	if n := tokenizer.DefaultBudget - len(m.content); n > 0 {
		m.content = append(m.content, clip.Bytes(text, n)...)
	}
}

// jsonUsage reads the usage of a JSON answer, whole or only its tail.
func jsonUsage(body []byte, tail bool) (Usage, bool) {
	if !tail {
		// The answer must be valid JSON, as a decode of it would require,
		// but only its usage is decoded: the choices are stepped over.
		var usage []byte
		object := jsonscan.ValidMembers(body, func(key, value []byte) bool {
			if string(key) == `"usage"` {
				usage = value // the last one, as a decode would take
			}
			return true
		})
		if !object || usage == nil {
			return Usage{}, false
		}
		return decodeUsage(usage)
	}
	// In the tail, the last "usage" key outside a string is the answer's:
	// inside strings the quotes are escaped.
	key := []byte(`"usage"`)
	for end := len(body); end > 0; {
		i := bytes.LastIndex(body[:end], key)
		if i < 0 {
			break
		}
		end = i
		if i > 0 && body[i-1] == '\\' {
			continue
		}
		rest := bytes.TrimLeft(body[i+len(key):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		var u wireUsage
		if json.NewDecoder(bytes.NewReader(rest[1:])).Decode(&u) != nil {
			continue
		}
		if c, ok := u.counts(); ok {
			return c, true
		}
	}
	return Usage{}, false
}

// EstimatePromptTokens estimates a request's prompt tokens from its body,
// for answers that reported no usage: the body's tokens, JSON framing
// included, counted by a tokenizer.Counter.
func EstimatePromptTokens(body []byte) int64 {
	var c tokenizer.Counter
	c.AddText(body)
	return c.Tokens()
}
