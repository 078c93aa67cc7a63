package sse

import (
	"bytes"
	"errors"
	"fmt"
)

// DefaultMaxEvent bounds the data of one event when Parser.MaxEvent is
// zero: a line limit alone would let an event of many data lines grow
// without bound.
const DefaultMaxEvent = 16 << 20

// ErrEventTooLong is returned for an event whose data exceeds the limit.
var ErrEventTooLong = errors.New("event stream event too long")

// Parser is the incremental form of the event-stream grammar: bytes go
// in as they arrive, in pieces of any size, and complete events come
// out. Reader is built on it, so a stream parses the same whether it is
// pulled from a connection or pushed through a response writer. Work and
// memory are linear in the input: an incomplete line is kept once and
// extended, never copied again.
//
// Lines end in "\n", "\r\n" or a lone "\r", also when the "\r" and the
// "\n" arrive in different pieces; a byte-order mark at the very start
// is skipped; comments and unknown fields are ignored; several data
// lines make one event, joined with "\n". The zero value is ready to use
// with the default limits. A Parser is not safe for concurrent use.
type Parser struct {
	// MaxLine bounds one line. Default: DefaultMaxLine.
	MaxLine int
	// MaxEvent bounds the data of one event. Default: DefaultMaxEvent.
	MaxEvent int
	// KeepRaw makes every event carry the exact bytes it was read from
	// (Event.Raw), terminator lines included, so that a relay can pass
	// an event on unchanged or leave it out.
	KeepRaw bool

	line      []byte
	pendingCR bool // the last line ended in "\r": a "\n" that follows belongs to it
	started   bool // past the optional byte-order mark
	bom       []byte
	event     Event
	haveData  bool
	raw       []byte
	skipped   int // bytes of a byte-order mark, read but in no event
	err       error
}

// Consumed reports how many input bytes the parser has taken in: those
// of the events it emitted, of a byte-order mark, and Held.
// After an error it tells how much of the last Feed was read.
func (p *Parser) Consumed(emitted int64) int64 {
	return emitted + int64(p.skipped+len(p.raw))
}

// Held returns the raw bytes of the event in progress (KeepRaw): read,
// but not yet part of an emitted event. The slice is the parser's own.
func (p *Parser) Held() []byte { return p.raw }

// Feed parses p and calls emit for every event it completes, in order.
// It stops at the first error of emit, which it returns, or at a limit,
// after which every call returns the same error.
func (p *Parser) Feed(b []byte, emit func(Event) error) error {
	if p.err != nil {
		return p.err
	}
	if !p.started {
		// The byte-order mark may itself arrive in pieces.
		for len(b) > 0 && len(p.bom) < 3 && b[0] == "\xEF\xBB\xBF"[len(p.bom)] {
			p.bom = append(p.bom, b[0])
			b = b[1:]
		}
		if len(p.bom) < 3 && len(b) == 0 {
			return nil
		}
		p.started = true
		if len(p.bom) == 3 {
			p.skipped = 3
		}
		if len(p.bom) < 3 && len(p.bom) > 0 {
			// Not a mark after all: those bytes are content.
			pending := p.bom
			p.bom = nil
			if err := p.feed(pending, emit); err != nil {
				return err
			}
		}
	}
	return p.feed(b, emit)
}

func (p *Parser) feed(b []byte, emit func(Event) error) error {
	for len(b) > 0 {
		if p.pendingCR {
			p.pendingCR = false
			if b[0] == '\n' {
				p.keep(b[:1])
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.keep(b)
			if err := p.extend(b); err != nil {
				return err
			}
			return nil
		}
		p.keep(b[:i+1])
		if err := p.extend(b[:i]); err != nil {
			return err
		}
		p.pendingCR = b[i] == '\r'
		b = b[i+1:]
		if err := p.endLine(emit); err != nil {
			return err
		}
	}
	return nil
}

func (p *Parser) keep(b []byte) {
	if p.KeepRaw {
		p.raw = append(p.raw, b...)
	}
}

func (p *Parser) extend(b []byte) error {
	p.line = append(p.line, b...)
	if max := orDefault(p.MaxLine, DefaultMaxLine); len(p.line) > max {
		p.err = fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, max)
		return p.err
	}
	return nil
}

// endLine interprets the line collected so far.
func (p *Parser) endLine(emit func(Event) error) error {
	line := p.line
	p.line = p.line[:0]
	if len(line) == 0 {
		return p.dispatch(emit)
	}
	if line[0] == ':' {
		return nil // comment
	}
	name, value, found := bytes.Cut(line, []byte(":"))
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "data":
		if p.haveData {
			p.event.Data = append(p.event.Data, '\n')
		}
		p.event.Data = append(p.event.Data, value...)
		p.haveData = true
		if max := orDefault(p.MaxEvent, DefaultMaxEvent); len(p.event.Data) > max {
			p.err = fmt.Errorf("%w (over %d bytes)", ErrEventTooLong, max)
			return p.err
		}
	case "event":
		p.event.Event = string(value)
	}
	return nil
}

// dispatch ends the current event at a blank line. A blank line without
// data only resets the event name, as the standard says, but its bytes
// stay in the next event's Raw.
func (p *Parser) dispatch(emit func(Event) error) error {
	if !p.haveData {
		p.event.Event = ""
		return nil
	}
	ev := p.event
	if p.KeepRaw {
		ev.Raw = p.raw
		p.raw = nil
	}
	p.event, p.haveData = Event{}, false
	if err := emit(ev); err != nil {
		p.err = err
		return err
	}
	return nil
}

// Close ends the stream: a last line without a terminator is read, and
// an event not followed by a blank line is still dispatched, because
// some servers end the stream right after "data: [DONE]". It returns the
// bytes that belong to no event (comments, blank lines, an incomplete
// event without data) when KeepRaw is set, so that a relay can pass them
// on.
func (p *Parser) Close(emit func(Event) error) (rest []byte, err error) {
	if p.err != nil {
		return nil, p.err
	}
	if !p.started && len(p.bom) > 0 {
		p.started = true
		if err := p.feed(p.bom, emit); err != nil {
			return nil, err
		}
	}
	if len(p.line) > 0 {
		if err := p.endLine(emit); err != nil {
			return nil, err
		}
	}
	if err := p.dispatch(emit); err != nil {
		return nil, err
	}
	rest, p.raw = p.raw, nil
	return rest, nil
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
