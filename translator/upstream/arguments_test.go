package upstream

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// argumentStream is a backend's stream of one tool call whose arguments,
// n bytes of JSON, arrive in pieces of 16 bytes, one chunk each, the
// way a model streams a long document into create_document.
func argumentStream(n int) (body, args string) {
	var a strings.Builder
	a.WriteString(`{"markdown":"`)
	for a.Len() < n-2 {
		a.WriteByte('x')
	}
	a.WriteString(`"}`)
	args = a.String()
	frames := []string{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"create_document","arguments":""}}]}}]}`}
	for i := 0; i < len(args); i += 16 {
		piece := args[i:min(i+16, len(args))]
		frames = append(frames, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}}]}`, piece))
	}
	frames = append(frames, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]")
	return eventStream(frames...), args
}

// allocatedBy returns the bytes allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestArgumentsAssembleInLinearMemory streams the same call with 8 times
// the arguments and checks that reading it allocates about 8 times as
// much, not 64: joining each piece onto a copy of everything before it
// costs the square of the length (a megabyte in 16-byte pieces once
// took 16 s). The bytes are what the test measures, not the time.
func TestArgumentsAssembleInLinearMemory(t *testing.T) {
	measure := func(n int) uint64 {
		body, want := argumentStream(n)
		u, _ := rawUpstream(t, "text/event-stream", body)
		var r roundResult
		bytes := allocatedBy(func() { r = drain(t, u) })
		if r.err != nil {
			t.Fatalf("%d bytes of arguments: %v", n, r.err)
		}
		if len(r.calls) != 1 || r.calls[0].Function.Arguments != want {
			t.Fatalf("%d bytes of arguments: the call came out wrong (%d calls)", n, len(r.calls))
		}
		if r.chars.Args != len(want) {
			t.Errorf("chars.Args %d, want %d", r.chars.Args, len(want))
		}
		return bytes
	}
	measure(4 << 10) // warm the client's connection and buffers
	small, large := measure(32<<10), measure(256<<10)
	ratio := float64(large) / float64(small)
	t.Logf("32 KiB of arguments: %d bytes allocated; 256 KiB: %d bytes (×%.1f)", small, large, ratio)
	if ratio > 16 {
		t.Errorf("8 times the arguments allocated %.1f times the bytes: assembly is not linear", ratio)
	}
}

// TestArgumentsAreBounded checks that a round whose tool-call arguments
// grow past MaxArgumentBytes fails as a backend failure instead of
// growing without end, and that a round just within the bound passes.
func TestArgumentsAreBounded(t *testing.T) {
	const limit = 64 << 10
	for _, tc := range []struct {
		name    string
		n       int
		wantErr bool
	}{
		{"within", limit, false},
		{"over", limit + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := argumentStream(tc.n)
			u, _ := rawUpstream(t, "text/event-stream", body)
			u.maxArgs = limit
			r := drain(t, u)
			var ue *Error
			switch {
			case !tc.wantErr && r.err != nil:
				t.Fatalf("error %v", r.err)
			case tc.wantErr && !errors.As(r.err, &ue):
				t.Fatalf("error %v (%T), want an *Error", r.err, r.err)
			case tc.wantErr && !strings.Contains(ue.Message, "arguments"):
				t.Errorf("message %q does not say what was too long", ue.Message)
			}
		})
	}
}

// TestArgumentsBoundCountsEveryCall checks that the bound is on the
// round's arguments together, not per call: many calls each within the
// bound cannot add up to more.
func TestArgumentsBoundCountsEveryCall(t *testing.T) {
	piece := strings.Repeat("y", 1000)
	var frames []string
	for i := range 100 {
		frames = append(frames, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"f","arguments":%q}}]}}]}`, i, i, `"`+piece+`"`))
	}
	frames = append(frames, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]")
	u, _ := rawUpstream(t, "text/event-stream", eventStream(frames...))
	u.maxArgs = 50_000
	var ue *Error
	if r := drain(t, u); !errors.As(r.err, &ue) {
		t.Fatalf("100 calls of 1 KB under a 50 KB bound: error %v, want an *Error", r.err)
	}
}
