package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

type namedTool string

func (n namedTool) Name() string            { return string(n) }
func (n namedTool) Description() string     { return "test" }
func (n namedTool) Schema() json.RawMessage { return Schemas[string(n)] }
func (n namedTool) Execute(context.Context, Call) (Result, error) {
	return Result{}, nil
}

func fullRegistry(t *testing.T) *Registry {
	t.Helper()
	r := &Registry{}
	for _, e := range []struct {
		c Capability
		n string
	}{
		{WebSearch, NameWebSearch},
		{OpenURL, NameOpenURL},
		{FileOutput, NameCreateDocument},
		{FileOutput, NameCreateSpreadsheet},
		{FileOutput, NameCreateWordDocument},
		{FileOutput, NameCreateChart},
		{FileOutput, NameCreateDiagram},
		{FileOutput, NameUpdateObject},
		{FileOutput, NameDeleteObject},
		{EndUserMemory, NameRemember},
		{Always, "clock"},
	} {
		if err := r.Register(e.c, namedTool(e.n)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestOfferFollowsOutputModes checks the output-mode table of spec 4.1.
func TestOfferFollowsOutputModes(t *testing.T) {
	files := []string{NameCreateDocument, NameCreateSpreadsheet, NameCreateWordDocument, NameCreateChart, NameCreateDiagram, NameUpdateObject, NameDeleteObject}
	cases := []struct {
		name string
		mode Mode
		want []string
	}{
		{name: "full (default)", mode: Mode{Files: true, Search: true},
			want: append(append([]string{NameWebSearch, NameOpenURL}, files...), "clock")},
		{name: "text plus search, no files", mode: Mode{Search: true},
			want: []string{NameWebSearch, NameOpenURL, "clock"}},
		{name: "text only, no search", mode: Mode{},
			want: []string{"clock"}},
		{name: "text only, no search, user links", mode: Mode{UserLinks: true},
			want: []string{NameOpenURL, "clock"}},
		{name: "full, no search", mode: Mode{Files: true},
			want: append(slices.Clone(files), "clock")},
		{name: "full with end user", mode: Mode{Files: true, Search: true, EndUser: true},
			want: append(append([]string{NameWebSearch, NameOpenURL}, files...), NameRemember, "clock")},
	}
	r := fullRegistry(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Offer(tc.mode).Names()
			if !slices.Equal(got, tc.want) {
				t.Errorf("offered %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSetLookupOnlyFindsOffered(t *testing.T) {
	s := fullRegistry(t).Offer(Mode{Search: true})
	if _, ok := s.Lookup(NameCreateDocument); ok {
		t.Error("a file tool was found in a text-only set")
	}
	if _, ok := s.Lookup(NameWebSearch); !ok {
		t.Error("web_search not found")
	}
	var nilReg *Registry
	if nilReg.Offer(Mode{Files: true, Search: true}).Len() != 0 {
		t.Error("nil registry offered tools")
	}
}

func TestSetCapability(t *testing.T) {
	s := fullRegistry(t).Offer(Mode{Files: true, Search: true})
	for name, want := range map[string]Capability{
		NameWebSearch: WebSearch, NameOpenURL: OpenURL, NameCreateDiagram: FileOutput, NameDeleteObject: FileOutput, "clock": Always,
	} {
		if got, ok := s.Capability(name); !ok || got != want {
			t.Errorf("%s: capability %d, %v; want %d", name, got, ok, want)
		}
	}
	if _, ok := s.Capability(NameRemember); ok {
		t.Error("a tool that was not offered has a capability")
	}
}

func TestRegisterRejects(t *testing.T) {
	r := &Registry{}
	if err := r.Register(Always, namedTool("a")); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(WebSearch, namedTool("a")); err == nil {
		t.Error("duplicate name accepted")
	}
	if err := r.Register(Always, namedTool("")); err == nil {
		t.Error("empty name accepted")
	}
	if err := r.Register(Capability(99), namedTool("b")); err == nil {
		t.Error("unknown capability accepted")
	}
}

func TestModelMessage(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{name: "call error is shown", err: Failf("bad %s", "query"), want: "error: bad query"},
		{name: "wrapped call error is shown", err: errors.Join(errors.New("ctx"), &CallError{Message: "m"}), want: "error: m"},
		{name: "internal error is hidden", err: errors.New("dial tcp 10.0.0.1: refused"), want: "error: the tool failed"},
		{name: "deadline", err: context.DeadlineExceeded, want: "error: the tool took too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ModelMessage(tc.err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLabelFor(t *testing.T) {
	if got := LabelFor(namedTool(NameWebSearch), NameWebSearch, nil); got != "Searching the web" {
		t.Errorf("web_search label %q", got)
	}
	if got := LabelFor(namedTool("fetch_weather"), "fetch_weather", nil); got != "Running fetch weather" {
		t.Errorf("fallback label %q", got)
	}
}

// Every request is offered its tools, so Offer hands out the Set made
// for the mode when the tools were registered, without allocating; the
// Set follows registrations made since.
func TestOfferIsKeptPerMode(t *testing.T) {
	r := fullRegistry(t)
	mode := Mode{Files: true, Search: true}
	if a := testing.AllocsPerRun(100, func() { _ = r.Offer(mode) }); a != 0 {
		t.Errorf("Offer allocates %.0f times", a)
	}
	s := r.Offer(mode)
	if grown := append(s.Tools(), namedTool("extra")); &grown[0] == &s.Tools()[0] {
		t.Error("an append to an offered Set wrote into the shared one")
	}
	if err := r.Register(Always, namedTool("late")); err != nil {
		t.Fatal(err)
	}
	for i := range modes {
		m := modeOf(i)
		if m.index() != i {
			t.Fatalf("mode %d reads back as %d", i, m.index())
		}
		var want []string
		for _, e := range r.entries {
			if m.allows(e.capability) {
				want = append(want, e.tool.Name())
			}
		}
		if got := r.Offer(m).Names(); !slices.Equal(got, want) || got[len(got)-1] != "late" {
			t.Errorf("%+v: offered %v, want %v", m, got, want)
		}
	}
}
