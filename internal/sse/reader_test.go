package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAllEvents(t testing.TB, r io.Reader, maxLine int) ([]Event, error) {
	s := NewReader(r, maxLine)
	var out []Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		ev.Data = append([]byte(nil), ev.Data...)
		out = append(out, ev)
		if len(out) > 1<<16 {
			t.Fatalf("runaway reader")
		}
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string // data of each event; "event:" prefix when a type is set
	}{
		{name: "lf", input: "data: a\n\ndata: b\n\n", want: []string{"a", "b"}},
		{name: "crlf", input: "data: a\r\n\r\ndata: b\r\n\r\n", want: []string{"a", "b"}},
		{name: "lone cr", input: "data: a\r\rdata: b\r\r", want: []string{"a", "b"}},
		{name: "mixed endings", input: "data: a\r\n\ndata: b\n\r\n", want: []string{"a", "b"}},
		{name: "comments skipped", input: ": keepalive\n\ndata: a\n: inside\n\n", want: []string{"a"}},
		{name: "multi-line data", input: "data: a\ndata: b\ndata:c\n\n", want: []string{"a\nb\nc"}},
		{name: "no space after colon", input: "data:{\"x\":1}\n\n", want: []string{`{"x":1}`}},
		{name: "only one space removed", input: "data:  a\n\n", want: []string{" a"}},
		{name: "event type", input: "event: error\ndata: x\n\n", want: []string{"event:error x"}},
		{name: "event type resets", input: "event: a\n\ndata: x\n\n", want: []string{"x"}},
		{name: "unknown fields ignored", input: "id: 7\nretry: 10\ndata: a\nfoo\n\n", want: []string{"a"}},
		{name: "empty data field", input: "data\n\n", want: []string{""}},
		{name: "blank lines without data", input: "\n\n\n", want: nil},
		{name: "last event without blank line", input: "data: a\n\ndata: [DONE]", want: []string{"a", "[DONE]"}},
		{name: "last event ends with newline only", input: "data: [DONE]\n", want: []string{"[DONE]"}},
		{name: "bom", input: "\xEF\xBB\xBFdata: a\n\n", want: []string{"a"}},
		{name: "colon in value", input: "data: {\"a\":\"b:c\"}\n\n", want: []string{`{"a":"b:c"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "byte by byte"} {
				var r io.Reader = strings.NewReader(tc.input)
				if mode != "whole" {
					r = iotest.OneByteReader(r)
				}
				evs, err := readAllEvents(t, r, 0)
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				var got []string
				for _, e := range evs {
					s := string(e.Data)
					if e.Event != "" {
						s = "event:" + e.Event + " " + s
					}
					got = append(got, s)
				}
				if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
					t.Errorf("%s: got %q, want %q", mode, got, tc.want)
				}
			}
		})
	}
}

func TestSSEReaderLineLimit(t *testing.T) {
	_, err := readAllEvents(t, strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50)
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("got %v, want ErrLineTooLong", err)
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	evs, err := readAllEvents(t, r, 0)
	if !errors.Is(err, boom) || len(evs) != 1 {
		t.Fatalf("got %d events, %v; want 1 event and the read error", len(evs), err)
	}
}

// FuzzSSEReader feeds arbitrary bytes to the parser. It must not panic,
// and re-encoding what it parsed, with any line ending, must parse to the
// same events.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b\r\n\r\n"), uint8(0))
	f.Add([]byte(": c\r\rdata:x\rdata: y\r\r"), uint8(1))
	f.Add([]byte("event: e\ndata\n\n\xEF\xBB\xBFdata: z"), uint8(2))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"), uint8(0))
	endings := []string{"\n", "\r\n", "\r"}
	f.Fuzz(func(t *testing.T, input []byte, ending uint8) {
		evs, err := readAllEvents(t, strings.NewReader(string(input)), 1<<16)
		if err != nil {
			return // only the line limit can fail an in-memory reader
		}
		nl := endings[int(ending)%len(endings)]
		var b strings.Builder
		for _, e := range evs {
			if e.Event != "" {
				b.WriteString("event: " + e.Event + nl)
			}
			for _, line := range strings.Split(string(e.Data), "\n") {
				b.WriteString("data: " + line + nl)
			}
			b.WriteString(nl)
		}
		again, err := readAllEvents(t, strings.NewReader(b.String()), 1<<17)
		if err != nil {
			t.Fatalf("re-encoded stream failed: %v", err)
		}
		if len(again) != len(evs) {
			t.Fatalf("%d events became %d", len(evs), len(again))
		}
		for i := range evs {
			if string(evs[i].Data) != string(again[i].Data) || evs[i].Event != again[i].Event {
				t.Fatalf("event %d: %q/%q became %q/%q", i, evs[i].Event, evs[i].Data, again[i].Event, again[i].Data)
			}
		}
	})
}

// sizeRecorder records the size of the buffer each Read is given.
type sizeRecorder struct {
	r     io.Reader
	sizes []int
}

func (s *sizeRecorder) Read(p []byte) (int, error) {
	s.sizes = append(s.sizes, len(p))
	return s.r.Read(p)
}

// A stream waits for its first event in its first Read, for as long as
// the backend takes to process the prompt: that Read gets a small
// buffer, and the stream's bytes a larger one once they flow.
func TestSSEReaderWaitsWithASmallBuffer(t *testing.T) {
	input := strings.Repeat("data: "+strings.Repeat("x", 100)+"\n\n", 100)
	rec := &sizeRecorder{r: iotest.HalfReader(strings.NewReader(input))}
	events, err := readAllEvents(t, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 100 || string(events[99].Data) != strings.Repeat("x", 100) {
		t.Fatalf("read %d events, the last %q", len(events), events[len(events)-1].Data)
	}
	if len(rec.sizes) < 2 || rec.sizes[0] != idleReadBuf || rec.sizes[1] != minReadBuf {
		t.Errorf("reads were given buffers of %v bytes, want %d first and %d once the stream began", rec.sizes[:min(len(rec.sizes), 4)], idleReadBuf, minReadBuf)
	}
}
