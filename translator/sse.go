package translator

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/jsonstr"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// StreamWriter writes a chat completion as server-sent events: one
// `data: {chunk}` frame per delta, a finishing chunk, an optional usage
// chunk and `data: [DONE]`. Every frame is flushed at once through
// http.NewResponseController, which reaches the connection through
// wrapping response writers.
//
// A StreamWriter is safe for concurrent use: the heartbeat writes from its
// own goroutine. After the first failed write every later write is a
// no-op returning that error, since the client is gone.
type StreamWriter struct {
	sseSink
	progress bool

	// Every chunk's frame up to its choices, `data: {"id":...,
	// "model":...,"choices":`, is the same for the whole stream: it is
	// written once, at the start of sseSink.buf, where every chunk is
	// built after it (headLen bytes), when the first chunk is. A stream
	// that waits for the backend's first byte holds no copy of it.
	id, model string
	created   int64
	headLen   int
}

// StreamOptions describe the stream's chunks.
type StreamOptions struct {
	ID      string // chunk id, "chatcmpl-..."
	Created int64  // Unix seconds
	Model   string // model name echoed to the client
	// Progress false (X-Progress-Stream: 0) drops every delta key but
	// role, content and the artifact events.
	Progress bool
	// Now is the clock for idle tracking. Default: time.Now.
	Now func() time.Time
}

// NewStreamWriter returns a writer for w. Nothing is written before Start.
func NewStreamWriter(w http.ResponseWriter, o StreamOptions) *StreamWriter {
	return &StreamWriter{
		sseSink:  newSSESink(w, o.Now),
		progress: o.Progress,
		id:       o.ID,
		created:  o.Created,
		model:    o.Model,
	}
}

// chunkRoom is what the frame buffer holds beyond the head at first: the
// role chunk, and a chunk of a few tokens of text.
const chunkRoom = 128

// appendChunkHead appends the fields before the choices as json.Marshal
// of a wire.Chunk encodes them, to a b of their size and chunkRoom more
// (its id and model need no escaping, as a rule).
func appendChunkHead(b []byte, id string, created int64, model string) []byte {
	const object = `,"object":"chat.completion.chunk","created":`
	b = slices.Grow(b, len(`data: {"id":`)+len(id)+len(object)+20+len(`,"model":`)+len(model)+len(`,"choices":`)+4+chunkRoom)
	b = append(b, `data: {"id":`...)
	b = jsonstr.Append(b, id)
	b = append(b, object...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = jsonstr.Append(b, model)
	return append(b, `,"choices":`...)
}

// Start sends the response headers and the first chunk, which carries
// the assistant role as OpenAI's first chunk does.
func (s *StreamWriter) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.beginLocked() {
		return s.err
	}
	return s.chunkLocked(wire.Chunk{Choices: []wire.ChunkChoice{{Delta: wire.Delta{Role: "assistant", Content: ptr("")}}}})
}

// Send writes one delta. With progress off, a delta left empty by the
// filter is not sent at all.
func (s *StreamWriter) Send(d wire.Delta) error {
	s.lock(false)
	defer s.unlock()
	return s.deltaLocked(d)
}

// SendBuffered is Send without the flush: the chunk waits in the
// response's buffer for Flush or the next write that flushes. A relay
// that knows more chunks are already in hand uses it to write them with
// one flush.
func (s *StreamWriter) SendBuffered(d wire.Delta) error {
	s.lock(true)
	defer s.unlock()
	return s.deltaLocked(d)
}

// deltaLocked writes the chunk of one delta, filtered for a stream with
// progress off; a delta left empty is not sent.
func (s *StreamWriter) deltaLocked(d wire.Delta) error {
	if !s.progress {
		d = d.Bare()
	}
	if d.Empty() {
		return s.err
	}
	return s.chunkLocked(wire.Chunk{Choices: []wire.ChunkChoice{{Delta: d}}})
}

// Finish writes the finishing chunk and [DONE]. A non-nil usage rides on
// the finishing chunk, unless separate asks for OpenAI's own form: one
// more chunk with empty choices, sent when the client asked for it with
// stream_options.include_usage.
func (s *StreamWriter) Finish(reason string, usage *wire.Usage, separate bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := wire.Chunk{Choices: []wire.ChunkChoice{{Delta: wire.Delta{}, FinishReason: &reason}}}
	if usage != nil && !separate {
		last.Usage = usage
	}
	if err := s.chunkLocked(last); err != nil {
		return err
	}
	if usage != nil && separate {
		if err := s.chunkLocked(wire.Chunk{Choices: []wire.ChunkChoice{}, Usage: usage}); err != nil {
			return err
		}
	}
	err := s.frameLocked([]byte("data: [DONE]\n\n"))
	s.done = true
	return err
}

// Fail ends the stream with an error frame and [DONE] (spec 7).
func (s *StreamWriter) Fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.done {
		return s.err
	}
	s.done = true
	s.lastWrite = s.now()
	if werr := apierror.WriteSSE(s.w, err); werr != nil {
		s.err = werr
	}
	return s.err
}

// chunkLocked writes c as json.Marshal would, with the stream's id,
// created and model: the head encoded once per stream, then the choices
// and usage. A chunk of text alone, most of a stream, is written without
// encoding/json.
func (s *StreamWriter) chunkLocked(c wire.Chunk) error {
	if s.headLen == 0 {
		s.buf = appendChunkHead(s.buf[:0], s.id, s.created, s.model)
		s.headLen = len(s.buf)
	}
	s.buf = s.buf[:s.headLen]
	if text, ok := textOnly(c); ok {
		s.buf = append(s.buf, `[{"index":0,"delta":{"content":`...)
		s.buf = jsonstr.Append(s.buf, text)
		s.buf = append(s.buf, "},\"finish_reason\":null}]}\n\n"...)
		return s.frameLocked(s.buf)
	}
	choices, err := json.Marshal(c.Choices)
	if err != nil {
		return err
	}
	s.buf = append(s.buf, choices...)
	if c.Usage != nil {
		usage, err := json.Marshal(c.Usage)
		if err != nil {
			return err
		}
		s.buf = append(s.buf, `,"usage":`...)
		s.buf = append(s.buf, usage...)
	}
	s.buf = append(s.buf, "}\n\n"...)
	return s.frameLocked(s.buf)
}

// textOnly returns the content of a chunk that carries only text: one
// unfinished choice at index 0 whose delta has content and nothing else,
// and no usage.
func textOnly(c wire.Chunk) (string, bool) {
	if len(c.Choices) != 1 || c.Usage != nil {
		return "", false
	}
	ch := c.Choices[0]
	if ch.Index != 0 || ch.FinishReason != nil || ch.Delta.Content == nil {
		return "", false
	}
	d := ch.Delta
	d.Content = nil
	return *ch.Delta.Content, d.Empty()
}
