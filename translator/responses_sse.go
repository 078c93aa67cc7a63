package translator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// ResponsesWriter writes a /v3/responses answer as the Responses API's
// server-sent events: response.created and response.in_progress; the one
// message item opened on the first text (response.output_item.added,
// response.content_part.added), its text as response.output_text.delta;
// at the end the item closed (response.output_text.done,
// response.content_part.done, response.output_item.done) and
// response.completed with the usage. Every /v3 delta key but role and
// content becomes an event of its own, "response.switchyard.<key>",
// carrying that key as the chat stream's delta does (wire.ResponseEventPrefix).
//
// It takes the deltas StreamWriter takes and is safe for concurrent use
// in the same way; after the first failed write every later write is a
// no-op returning that error.
type ResponsesWriter struct {
	sseSink
	id       string
	itemID   string
	created  int64
	model    string
	progress bool

	// Guarded by sseSink.mu.
	opened bool // the message item was announced
	seq    int64
	text   strings.Builder
}

// NewResponsesWriter returns a writer for w. Nothing is written before
// Start. o.ID is the response id, "resp_...".
func NewResponsesWriter(w http.ResponseWriter, o StreamOptions) *ResponsesWriter {
	return &ResponsesWriter{
		sseSink: newSSESink(w, o.Now),
		id:      o.ID, itemID: messageItemID(o.ID), created: o.Created, model: o.Model, progress: o.Progress,
	}
}

// responseID is the id of a /v3/responses answer made from the turn's
// id, and messageItemID the id of its message item: the same random
// part under the Responses API's prefixes.
func responseID(turnID string) string { return "resp_" + strings.TrimPrefix(turnID, "chatcmpl-") }

func messageItemID(respID string) string { return "msg_" + strings.TrimPrefix(respID, "resp_") }

// responsesEvent is one event of the stream; the members an event type
// does not have stay unset.
type responsesEvent struct {
	Type           string              `json:"type"`
	SequenceNumber int64               `json:"sequence_number"`
	Response       *wire.Response      `json:"response,omitempty"`
	OutputIndex    *int                `json:"output_index,omitempty"`
	ItemID         string              `json:"item_id,omitempty"`
	ContentIndex   *int                `json:"content_index,omitempty"`
	Item           *wire.OutputMessage `json:"item,omitempty"`
	Part           *wire.OutputText    `json:"part,omitempty"`
	Delta          *string             `json:"delta,omitempty"`
	Text           *string             `json:"text,omitempty"`
	Logprobs       *[]struct{}         `json:"logprobs,omitempty"`
}

var zeroIndex = 0

// response is the stream's response object in state status.
func (s *ResponsesWriter) response(status string, output []wire.OutputMessage, usage *wire.ResponseUsage) *wire.Response {
	if output == nil {
		output = []wire.OutputMessage{}
	}
	return &wire.Response{
		ID: s.id, Object: "response", CreatedAt: s.created, Status: status, Model: s.model,
		Output: output, ToolChoice: "auto", Tools: []struct{}{}, Usage: usage,
	}
}

// Start sends the response headers, response.created and
// response.in_progress.
func (s *ResponsesWriter) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.beginLocked() {
		return s.err
	}
	s.noFlush = true
	_ = s.eventLocked(responsesEvent{Type: "response.created", Response: s.response(wire.ResponseInProgress, nil, nil)})
	s.noFlush = false
	return s.eventLocked(responsesEvent{Type: "response.in_progress", Response: s.response(wire.ResponseInProgress, nil, nil)})
}

// Send writes the events of one delta. With progress off, only text and
// the artifact events are sent.
func (s *ResponsesWriter) Send(d wire.Delta) error {
	s.lock(false)
	defer s.unlock()
	return s.deltaLocked(d)
}

// SendBuffered is Send without the flush, as StreamWriter.SendBuffered.
func (s *ResponsesWriter) SendBuffered(d wire.Delta) error {
	s.lock(true)
	defer s.unlock()
	return s.deltaLocked(d)
}

func (s *ResponsesWriter) deltaLocked(d wire.Delta) error {
	if !s.progress {
		d = d.Bare()
	}
	if d.Content != nil && *d.Content != "" {
		if err := s.openLocked(); err != nil {
			return err
		}
		s.text.WriteString(*d.Content)
		logprobs := []struct{}{}
		if err := s.eventLocked(responsesEvent{
			Type: "response.output_text.delta", ItemID: s.itemID, OutputIndex: &zeroIndex, ContentIndex: &zeroIndex,
			Delta: d.Content, Logprobs: &logprobs,
		}); err != nil {
			return err
		}
	}
	for _, x := range extraKeys(d) {
		if err := s.extraLocked(x); err != nil {
			return err
		}
	}
	return s.err
}

// openLocked announces the message item and its text part, once.
func (s *ResponsesWriter) openLocked() error {
	if s.opened {
		return nil
	}
	s.opened = true
	item := wire.OutputMessage{ID: s.itemID, Type: "message", Status: wire.ResponseInProgress, Role: "assistant", Content: []wire.OutputText{}}
	if err := s.eventLocked(responsesEvent{Type: "response.output_item.added", OutputIndex: &zeroIndex, Item: &item}); err != nil {
		return err
	}
	part := wire.NewOutputText("")
	return s.eventLocked(responsesEvent{
		Type: "response.content_part.added", ItemID: s.itemID, OutputIndex: &zeroIndex, ContentIndex: &zeroIndex, Part: &part,
	})
}

// extraLocked writes one /v3 key as its own event: the delta holding that
// key alone, with the event's type and sequence number in front.
func (s *ResponsesWriter) extraLocked(x extraKey) error {
	body, err := json.Marshal(x.delta)
	if err != nil {
		return err
	}
	s.buf = s.buf[:0]
	s.buf = append(s.buf, "event: "...)
	s.buf = append(s.buf, wire.ResponseEventPrefix...)
	s.buf = append(s.buf, x.key...)
	s.buf = append(s.buf, "\ndata: {\"type\":\""...)
	s.buf = append(s.buf, wire.ResponseEventPrefix...)
	s.buf = append(s.buf, x.key...)
	s.buf = append(s.buf, "\",\"sequence_number\":"...)
	s.buf = strconv.AppendInt(s.buf, s.seq, 10)
	s.seq++
	s.buf = append(s.buf, ',')
	s.buf = append(s.buf, body[1:]...)
	s.buf = append(s.buf, "\n\n"...)
	return s.frameLocked(s.buf)
}

// extraKey is one /v3 key of a delta, alone in a delta of its own.
type extraKey struct {
	key   string
	delta wire.Delta
}

// extraKeys splits the /v3 keys of d, in the order of wire.Delta's
// fields. Role and content are not among them: text is the message
// item's.
func extraKeys(d wire.Delta) []extraKey {
	var out []extraKey
	add := func(key string, one wire.Delta) { out = append(out, extraKey{key, one}) }
	if d.QueuePosition != nil {
		add("queue_position", wire.Delta{QueuePosition: d.QueuePosition})
	}
	if d.Act != nil {
		add("act", wire.Delta{Act: d.Act})
	}
	if d.Step != nil {
		add("step", wire.Delta{Step: d.Step})
	}
	if d.StepData != nil {
		add("step_data", wire.Delta{StepData: d.StepData})
	}
	if d.ReasoningChars != nil {
		add("reasoning_chars", wire.Delta{ReasoningChars: d.ReasoningChars})
	}
	if d.Artifact != nil {
		add("artifact", wire.Delta{Artifact: d.Artifact})
	}
	if d.ArtifactRemove != nil {
		add("artifact_remove", wire.Delta{ArtifactRemove: d.ArtifactRemove})
	}
	if d.ArtifactRename != nil {
		add("artifact_rename", wire.Delta{ArtifactRename: d.ArtifactRename})
	}
	if len(d.SearchSources) > 0 {
		add("search_sources", wire.Delta{SearchSources: d.SearchSources})
	}
	return out
}

// Finish closes the message item and writes response.completed, with
// the usage when it is not nil; reason "length" makes the response
// incomplete (max_output_tokens). separate is StreamWriter's and has no
// meaning here: the usage is always the response's.
func (s *ResponsesWriter) Finish(reason string, usage *wire.Usage, _ bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(); err != nil {
		return err
	}
	status := wire.ResponseCompleted
	var incomplete *wire.IncompleteDetails
	if reason == "length" {
		status = wire.ResponseIncomplete
		incomplete = &wire.IncompleteDetails{Reason: "max_output_tokens"}
	}
	text := s.text.String()
	part := wire.NewOutputText(text)
	logprobs := []struct{}{}
	s.noFlush = true
	_ = s.eventLocked(responsesEvent{
		Type: "response.output_text.done", ItemID: s.itemID, OutputIndex: &zeroIndex, ContentIndex: &zeroIndex,
		Text: &text, Logprobs: &logprobs,
	})
	_ = s.eventLocked(responsesEvent{
		Type: "response.content_part.done", ItemID: s.itemID, OutputIndex: &zeroIndex, ContentIndex: &zeroIndex, Part: &part,
	})
	item := wire.OutputMessage{ID: s.itemID, Type: "message", Status: status, Role: "assistant", Content: []wire.OutputText{part}}
	_ = s.eventLocked(responsesEvent{Type: "response.output_item.done", OutputIndex: &zeroIndex, Item: &item})
	s.noFlush = false
	var u *wire.ResponseUsage
	if usage != nil {
		u = wire.ResponseUsageOf(*usage)
	}
	resp := s.response(status, []wire.OutputMessage{item}, u)
	resp.IncompleteDetails = incomplete
	typ := "response.completed"
	if status == wire.ResponseIncomplete {
		typ = "response.incomplete"
	}
	err := s.eventLocked(responsesEvent{Type: typ, Response: resp})
	s.done = true
	return err
}

// Fail ends the stream with an error event: the Responses API's "error"
// event (type, code, message, param) that also holds the gateway's error
// envelope under "error", which makes the SDKs' stream readers raise it
// as they raise the chat stream's error frame.
func (s *ResponsesWriter) Fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.done {
		return s.err
	}
	e := apierror.From(err)
	var envelope struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(e.JSON(), &envelope)
	body, merr := json.Marshal(struct {
		Type           string          `json:"type"`
		SequenceNumber int64           `json:"sequence_number"`
		Code           string          `json:"code"`
		Message        string          `json:"message"`
		Param          *string         `json:"param"`
		Error          json.RawMessage `json:"error"`
	}{"error", s.seq, e.Code, e.Message, nil, envelope.Error})
	if merr != nil {
		return merr
	}
	s.seq++
	werr := s.frameLocked(append(append([]byte("event: error\ndata: "), body...), '\n', '\n'))
	s.done = true
	return werr
}

// eventLocked writes ev with the next sequence number.
func (s *ResponsesWriter) eventLocked(ev responsesEvent) error {
	ev.SequenceNumber = s.seq
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	s.seq++
	s.buf = append(s.buf[:0], "event: "...)
	s.buf = append(s.buf, ev.Type...)
	s.buf = append(s.buf, "\ndata: "...)
	s.buf = append(s.buf, body...)
	s.buf = append(s.buf, "\n\n"...)
	return s.frameLocked(s.buf)
}
