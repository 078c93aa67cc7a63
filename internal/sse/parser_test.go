package sse

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// feedAll pushes input through a Parser in pieces of size step (the whole
// input when step <= 0) and returns the events and the raw bytes that
// belong to none.
func feedAll(input []byte, step int, p *Parser) ([]Event, []byte, error) {
	var evs []Event
	emit := func(ev Event) error { evs = append(evs, ev); return nil }
	if step <= 0 {
		step = len(input) + 1
	}
	for len(input) > 0 {
		n := min(step, len(input))
		if err := p.Feed(input[:n], emit); err != nil {
			return evs, nil, err
		}
		input = input[n:]
	}
	rest, err := p.Close(emit)
	return evs, rest, err
}

func TestParserSplitsAnywhere(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{name: "lf", input: "data: a\n\ndata: b\n\n", want: []string{"a", "b"}},
		{name: "crlf", input: "data: a\r\n\r\ndata: b\r\n\r\n", want: []string{"a", "b"}},
		{name: "lone cr", input: "data: a\r\rdata: b\r\r", want: []string{"a", "b"}},
		{name: "multi-line data", input: "data: a\ndata: b\n\n", want: []string{"a\nb"}},
		{name: "comments and unknown fields", input: ": ping\nid: 3\ndata: x\n\n", want: []string{"x"}},
		{name: "byte-order mark", input: "\xEF\xBB\xBFdata: x\n\n", want: []string{"x"}},
		{name: "final event without blank line", input: "data: a\n\ndata: [DONE]", want: []string{"a", "[DONE]"}},
		{name: "data without space", input: "data:x\n\n", want: []string{"x"}},
	}
	for _, tt := range tests {
		for step := 0; step <= len(tt.input); step++ {
			var p Parser
			evs, _, err := feedAll([]byte(tt.input), step, &p)
			if err != nil {
				t.Fatalf("%s, pieces of %d: %v", tt.name, step, err)
			}
			var got []string
			for _, e := range evs {
				got = append(got, string(e.Data))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("%s, pieces of %d: %q, want %q", tt.name, step, got, tt.want)
			}
		}
	}
}

func TestParserRawRebuildsTheInput(t *testing.T) {
	input := []byte(": hello\r\n\r\ndata: a\r\ndata: b\r\n\r\nevent: usage\ndata: {}\n\ndata: tail")
	for step := 1; step <= len(input); step++ {
		p := Parser{KeepRaw: true}
		evs, rest, err := feedAll(input, step, &p)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, e := range evs {
			b.Write(e.Raw)
		}
		b.Write(rest)
		if !bytes.Equal(b.Bytes(), input) {
			t.Fatalf("pieces of %d: raw bytes %q, want %q", step, b.Bytes(), input)
		}
	}
}

func TestParserLimits(t *testing.T) {
	p := Parser{MaxLine: 10}
	if _, _, err := feedAll([]byte("data: 0123456789\n\n"), 3, &p); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("long line: %v, want ErrLineTooLong", err)
	}
	p = Parser{MaxLine: 20, MaxEvent: 12}
	input := strings.Repeat("data: 12345\n", 5) + "\n"
	if _, _, err := feedAll([]byte(input), 4, &p); !errors.Is(err, ErrEventTooLong) {
		t.Errorf("many data lines: %v, want ErrEventTooLong", err)
	}
}

// FuzzParserPieces checks that the push parser reads any input the same
// in any pieces as the pull Reader does in one, and that the raw bytes of
// its events and the rest add up to the input.
func FuzzParserPieces(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b\r\n\r\n"), uint8(1))
	f.Add([]byte(": c\r\rdata:x\rdata: y\r\r"), uint8(2))
	f.Add([]byte("\xEF\xBB\xBFdata: z\r"), uint8(1))
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":3}}\n\ndata: [DONE]\n\n"), uint8(7))
	f.Fuzz(func(t *testing.T, input []byte, step uint8) {
		want, werr := readAllEvents(t, bytes.NewReader(input), 1<<16)
		p := Parser{MaxLine: 1 << 16, KeepRaw: true}
		got, rest, err := feedAll(input, int(step), &p)
		if (err != nil) != (werr != nil) {
			t.Fatalf("pieces of %d: error %v, Reader's %v", step, err, werr)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("pieces of %d: %d events, Reader %d", step, len(got), len(want))
		}
		var raw bytes.Buffer
		for i := range got {
			if !bytes.Equal(got[i].Data, want[i].Data) || got[i].Event != want[i].Event {
				t.Fatalf("event %d: %q/%q, Reader %q/%q", i, got[i].Event, got[i].Data, want[i].Event, want[i].Data)
			}
			raw.Write(got[i].Raw)
		}
		raw.Write(rest)
		in := bytes.TrimPrefix(input, []byte("\xEF\xBB\xBF"))
		if !bytes.Equal(raw.Bytes(), in) {
			t.Fatalf("raw bytes %q, want %q", raw.Bytes(), in)
		}
	})
}
