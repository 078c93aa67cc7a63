package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	Event string // "event:" field; empty for the default "message"
	Data  []byte // "data:" lines joined with "\n"
}

// DefaultMaxLine bounds one line of an upstream stream. Generous: a
// backend may put a whole tool call's arguments into one chunk.
const DefaultMaxLine = 8 << 20

var ErrLineTooLong = errors.New("event stream line too long")

// Reader parses a text/event-stream as the WHATWG HTML standard
// describes it (section 9.2.6), leniently where backends differ: lines
// may end in "\n", "\r\n" or a lone "\r"; comments and unknown fields are
// skipped; several data lines make one event; a final event that is not
// followed by a blank line is still dispatched, because some servers end
// the stream right after "data: [DONE]".
type Reader struct {
	r         *bufio.Reader
	maxLine   int
	line      []byte
	pendingCR bool // the last line ended in "\r": skip a "\n" that follows
	started   bool
	eof       bool
}

func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{r: bufio.NewReaderSize(r, 32<<10), maxLine: maxLine}
}

// Next returns the next event, or io.EOF after the last one. Other
// errors come from the underlying reader or a line over the limit.
func (s *Reader) Next() (Event, error) {
	var ev Event
	var data []byte
	haveData := false
	for {
		line, err := s.readLine()
		if err == io.EOF {
			if haveData {
				ev.Data = data
				return ev, nil
			}
			return Event{}, io.EOF
		}
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if haveData {
				ev.Data = data
				return ev, nil
			}
			ev.Event = ""
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "data":
			if haveData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			haveData = true
		case "event":
			ev.Event = string(value)
		}
	}
}

// readLine returns the next line without its terminator. The slice is
// valid until the next call.
func (s *Reader) readLine() ([]byte, error) {
	if s.eof {
		return nil, io.EOF
	}
	s.line = s.line[:0]
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				if err == io.EOF {
					s.eof = true
					if len(s.line) > 0 {
						return s.line, nil
					}
				}
				return nil, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.pendingCR {
			s.pendingCR = false
			if buf[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		if !s.started {
			s.started = true
			if bom, _ := s.r.Peek(3); bytes.Equal(bom, []byte("\xEF\xBB\xBF")) {
				_, _ = s.r.Discard(3)
			}
			continue
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			s.line = append(s.line, buf...)
			_, _ = s.r.Discard(len(buf))
			if len(s.line) > s.maxLine {
				return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, s.maxLine)
			}
			continue
		}
		s.line = append(s.line, buf[:i]...)
		s.pendingCR = buf[i] == '\r'
		_, _ = s.r.Discard(i + 1)
		if len(s.line) > s.maxLine {
			return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, s.maxLine)
		}
		return s.line, nil
	}
}
