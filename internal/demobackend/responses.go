package demobackend

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// responsesPath is OpenAI's Responses API, which the server answers with
// the same Reply as a chat request: text and function calls, with usage
// as input_tokens / output_tokens, in one JSON document or as the API's
// typed events (response.created ... response.completed).
const responsesPath = "/v1/responses"

// responsesBody is what the server reads of a Responses request.
type responsesBody struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
}

// responsesItem is one input item: a message (with or without "type"),
// or a function call or its output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    string          `json:"output"`
}

// decodeResponsesRequest reads a Responses body as the ChatRequest it
// stands for, so that scripts, the demo answer and the token counts treat
// both APIs alike: instructions become a system message, input a user
// message or the messages its items are; max_output_tokens is the output
// limit.
func decodeResponsesRequest(body []byte) (*ChatRequest, *apierror.Error) {
	var fields map[string]json.RawMessage
	var rb responsesBody
	if json.Unmarshal(body, &fields) != nil || fields == nil || json.Unmarshal(body, &rb) != nil {
		return nil, apierror.InvalidRequest(codeInvalidJSON,
			"We could not parse the JSON body of your request. The API expects a JSON object payload.")
	}
	if rb.Model == "" {
		return nil, apierror.InvalidRequest(codeMissingParam, "Missing required parameter: 'model'.")
	}
	req := &ChatRequest{Model: rb.Model, Stream: rb.Stream, MaxCompletionTokens: rb.MaxOutputTokens, rawFields: fields}
	if rb.Instructions != "" {
		req.Messages = append(req.Messages, textMessage("system", rb.Instructions))
	}
	var text string
	var items []responsesItem
	switch {
	case json.Unmarshal(rb.Input, &text) == nil:
		req.Messages = append(req.Messages, textMessage("user", text))
	case json.Unmarshal(rb.Input, &items) == nil:
		for _, it := range items {
			switch it.Type {
			case "", "message":
				req.Messages = append(req.Messages, textMessage(it.Role, itemText(it.Content)))
			case "function_call":
				m := Message{Role: "assistant"}
				tc := MessageToolCall{ID: it.CallID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = it.Name, it.Arguments
				m.ToolCalls = []MessageToolCall{tc}
				req.Messages = append(req.Messages, m)
			case "function_call_output":
				m := textMessage("tool", it.Output)
				m.ToolCallID = it.CallID
				req.Messages = append(req.Messages, m)
			}
		}
	default:
		return nil, apierror.InvalidRequest(codeMissingParam, "Missing required parameter: 'input'.")
	}
	return req, nil
}

func textMessage(role, text string) Message {
	content, _ := json.Marshal(text)
	return Message{Role: role, Content: content}
}

// itemText is the text of a message item's content: a string, or its
// input_text and output_text parts joined with newlines.
func itemText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Wire shapes of the Responses API's answers.

type responseJSON struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"` // "response"
	CreatedAt         int64             `json:"created_at"`
	Status            string            `json:"status"`
	IncompleteDetails *incompleteJSON   `json:"incomplete_details"`
	Model             string            `json:"model"`
	Output            []json.RawMessage `json:"output"`
	Usage             json.RawMessage   `json:"usage"`
}

type incompleteJSON struct {
	Reason string `json:"reason"`
}

type outputMessageJSON struct {
	Type    string           `json:"type"` // "message"
	ID      string           `json:"id"`
	Status  string           `json:"status"`
	Role    string           `json:"role"`
	Content []outputTextJSON `json:"content"`
}

type outputTextJSON struct {
	Type        string   `json:"type"` // "output_text"
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
}

type functionCallItemJSON struct {
	Type      string `json:"type"` // "function_call"
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

type responsesUsageJSON struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// responseID is the Responses API id of c, and the id of its items.
func (c *completion) responseID(prefix string) string {
	return prefix + strings.TrimPrefix(c.id, "chatcmpl-")
}

// responsesUsage is the usage object c reports, in the Responses shape.
func (c *completion) responsesUsage() json.RawMessage {
	if c.rawUsage != nil {
		return c.rawUsage
	}
	u := responsesUsageJSON{InputTokens: c.usage.PromptTokens, OutputTokens: c.usage.CompletionTokens, TotalTokens: c.usage.TotalTokens}
	u.OutputTokensDetails.ReasoningTokens = c.usage.ReasoningTokens
	b, _ := json.Marshal(u)
	return b
}

func (c *completion) messageItem(status string, text string) outputMessageJSON {
	m := outputMessageJSON{Type: "message", ID: c.responseID("msg_"), Status: status, Role: "assistant", Content: []outputTextJSON{}}
	if status == "completed" {
		m.Content = append(m.Content, outputTextJSON{Type: "output_text", Text: text, Annotations: []string{}})
	}
	return m
}

func (c *completion) functionCallItem(i int) functionCallItemJSON {
	tc := c.toolCalls[i]
	return functionCallItemJSON{Type: "function_call", ID: c.responseID("fc_") + "_" + strconv.Itoa(i), CallID: tc.ID,
		Name: tc.Name, Arguments: tc.Arguments, Status: "completed"}
}

// response is c as a Responses API response object; done adds its output
// and usage, as response.completed and a JSON answer carry them.
func (c *completion) response(done bool) responseJSON {
	r := responseJSON{ID: c.responseID("resp_"), Object: "response", CreatedAt: c.created, Status: "in_progress",
		Model: c.model, Output: []json.RawMessage{}, Usage: json.RawMessage("null")}
	if !done {
		return r
	}
	r.Status = "completed"
	if c.finish == "length" {
		r.Status, r.IncompleteDetails = "incomplete", &incompleteJSON{Reason: "max_output_tokens"}
	}
	if text := c.text(); text != "" || len(c.toolCalls) == 0 {
		r.Output = append(r.Output, rawJSON(c.messageItem("completed", text)))
	}
	for i := range c.toolCalls {
		r.Output = append(r.Output, rawJSON(c.functionCallItem(i)))
	}
	r.Usage = c.responsesUsage()
	return r
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// serveResponse answers a Responses request with c, streamed or whole.
func (s *Server) serveResponse(w http.ResponseWriter, r *http.Request, req *ChatRequest, c *completion, reply Reply) {
	if req.Stream {
		s.streamResponse(w, r, c, reply)
		return
	}
	body, err := json.Marshal(c.response(true))
	if err != nil {
		apierror.Write(w, apierror.Internal())
		return
	}
	s.writeJSONAnswer(w, r, c, reply, append(body, '\n'))
}

// responseEvent is one event of a Responses stream: its type, its
// members besides type and sequence_number, and whether it stands for a
// generated token.
type responseEvent struct {
	typ    string
	fields map[string]any
	token  bool
}

// responseEvents lays c out as OpenAI streams a response: created, then
// per output item its added event, its text deltas (or its whole
// function call) and done events, then completed with the usage. There is
// no [DONE].
func (c *completion) responseEvents() []responseEvent {
	ev := func(typ string, kv ...any) responseEvent {
		f := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			f[kv[i].(string)] = kv[i+1]
		}
		return responseEvent{typ: typ, fields: f}
	}
	out := []responseEvent{
		ev("response.created", "response", c.response(false)),
		ev("response.in_progress", "response", c.response(false)),
	}
	index := 0
	if text := c.text(); text != "" || len(c.toolCalls) == 0 {
		msgID := c.responseID("msg_")
		part := outputTextJSON{Type: "output_text", Text: "", Annotations: []string{}}
		out = append(out,
			ev("response.output_item.added", "output_index", index, "item", c.messageItem("in_progress", "")),
			ev("response.content_part.added", "item_id", msgID, "output_index", index, "content_index", 0, "part", part))
		for _, t := range c.content {
			e := ev("response.output_text.delta", "item_id", msgID, "output_index", index, "content_index", 0, "delta", t, "logprobs", []string{})
			e.token = true
			out = append(out, e)
		}
		part.Text = text
		out = append(out,
			ev("response.output_text.done", "item_id", msgID, "output_index", index, "content_index", 0, "text", text, "logprobs", []string{}),
			ev("response.content_part.done", "item_id", msgID, "output_index", index, "content_index", 0, "part", part),
			ev("response.output_item.done", "output_index", index, "item", c.messageItem("completed", text)))
		index++
	}
	for i := range c.toolCalls {
		item := c.functionCallItem(i)
		e := ev("response.output_item.done", "output_index", index, "item", item)
		e.token = true
		out = append(out, ev("response.output_item.added", "output_index", index, "item", item), e)
		index++
	}
	return append(out, ev("response.completed", "response", c.response(true)))
}

// streamResponse sends c as the Responses API's events, flushing each,
// paced and cut like a chat stream (Options, Reply.BreakAfter).
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, c *completion, reply Reply) {
	ctx := r.Context()
	if !sleep(ctx, s.opts.TimeToFirstToken) {
		abort()
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	firstToken := true
	var buf bytes.Buffer
	for i, e := range c.responseEvents() {
		if reply.BreakAfter > 0 && i == reply.BreakAfter {
			s.breakStream(w, reply)
			return
		}
		if e.token {
			if !firstToken && !sleep(ctx, s.opts.InterTokenDelay) {
				abort()
			}
			firstToken = false
		}
		e.fields["type"], e.fields["sequence_number"] = e.typ, i
		data, err := json.Marshal(e.fields)
		if err != nil {
			_ = apierror.WriteSSE(w, apierror.Internal())
			return
		}
		buf.Reset()
		buf.WriteString("event: " + e.typ + "\ndata: ")
		buf.Write(data)
		buf.WriteString("\n\n")
		c.writing()
		if _, err := w.Write(buf.Bytes()); err != nil {
			abort()
		}
		if err := rc.Flush(); err != nil || ctx.Err() != nil {
			abort()
		}
		c.wrote(e.token)
	}
	if reply.BreakAfter > 0 {
		s.breakStream(w, reply)
		return
	}
	c.finished()
}
