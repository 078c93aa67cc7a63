// Package sse reads text/event-stream, the framing of OpenAI-style
// streams, as the WHATWG HTML standard describes it: pulled from a
// connection (Reader) or pushed through in pieces as a response passes
// (Parser). Both share one grammar, so the orchestrator's upstream client
// and the /v1 meter cannot read a stream differently.
package sse

import (
	"errors"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	Event string // "event:" field; empty for the default "message"
	Data  []byte // "data:" lines joined with "\n"
	// Raw is the event's bytes as read, terminating blank line included,
	// when the Parser keeps them (Parser.KeepRaw); nil otherwise.
	Raw []byte
}

// DefaultMaxLine bounds one line of an upstream stream. Generous: a
// backend may put a whole tool call's arguments into one chunk.
const DefaultMaxLine = 8 << 20

// ErrLineTooLong is returned for a line over the limit.
var ErrLineTooLong = errors.New("event stream line too long")

// Reader parses a text/event-stream pulled from an io.Reader, as the
// WHATWG HTML standard describes it (section 9.2.6), leniently where
// backends differ; see Parser for the grammar, which it shares.
type Reader struct {
	r       io.Reader
	p       Parser
	buf     []byte
	pending []Event
	eof     bool
	err     error
}

// NewReader returns a Reader of r with lines bounded to maxLine bytes
// (DefaultMaxLine when maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	return &Reader{r: r, p: Parser{MaxLine: maxLine}}
}

// The first read, which a stream whose backend has sent its headers but
// no event yet waits in (for as long as the prompt takes, and for
// thousands of streams at once), gets a buffer of idleReadBuf; the
// stream's first bytes replace it with one of minReadBuf, small since a
// stream's chunks are a few hundred bytes, which doubles, up to
// maxReadBuf, whenever a read fills it.
const (
	idleReadBuf = 256
	minReadBuf  = 4 << 10
	maxReadBuf  = 32 << 10
)

// Next returns the next event, or io.EOF after the last one. Other
// errors come from the underlying reader or a limit.
func (s *Reader) Next() (Event, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return Event{}, s.err
		}
		if s.eof {
			return Event{}, io.EOF
		}
		if s.buf == nil {
			s.buf = make([]byte, idleReadBuf)
		}
		n, err := s.r.Read(s.buf)
		if n > 0 {
			perr := s.p.Feed(s.buf[:n], s.queue) // copies what it keeps
			switch {
			case len(s.buf) < minReadBuf:
				s.buf = make([]byte, minReadBuf) // the stream has begun
			case n == len(s.buf) && len(s.buf) < maxReadBuf:
				s.buf = make([]byte, 2*len(s.buf))
			}
			if perr != nil {
				s.err = perr
				continue
			}
		}
		switch {
		case err == io.EOF:
			s.eof = true
			if _, cerr := s.p.Close(s.queue); cerr != nil {
				s.err = cerr
			}
		case err != nil:
			s.err = err
		}
	}
	ev := s.pending[0]
	s.pending = s.pending[1:]
	return ev, nil
}

// Buffered reports whether Next has an event without reading.
func (s *Reader) Buffered() bool { return len(s.pending) > 0 }

func (s *Reader) queue(ev Event) error {
	// Event data shares no memory with the parser, which reuses its
	// buffers only for lines.
	s.pending = append(s.pending, ev)
	return nil
}
