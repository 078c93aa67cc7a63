package routing

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// fakePool answers with status, or fails with err before writing.
type fakePool struct {
	name   string
	status int
	err    error
	served *[]string
}

func (p fakePool) Model() string { return p.name }

func (p fakePool) ServeHTTP(w http.ResponseWriter, _ *http.Request) error {
	*p.served = append(*p.served, p.name)
	if p.status != 0 {
		w.WriteHeader(p.status)
	}
	return p.err
}

func TestFallback(t *testing.T) {
	failed := func(err error) bool { return err != nil }
	down := errors.New("no upstream answered")
	tests := []struct {
		name      string
		chain     func(served *[]string) []fakePool
		wantOrder []string
		wantWrote bool
	}{
		{"the first answers", func(s *[]string) []fakePool {
			return []fakePool{{name: "a", status: 200, served: s}, {name: "b", status: 200, served: s}}
		}, []string{"a"}, true},
		{"a failed pool passes on", func(s *[]string) []fakePool {
			return []fakePool{{name: "a", err: down, served: s}, {name: "b", status: 200, served: s}}
		}, []string{"a", "b"}, true},
		{"a pool that wrote keeps the request", func(s *[]string) []fakePool {
			return []fakePool{{name: "a", status: 500, err: down, served: s}, {name: "b", status: 200, served: s}}
		}, []string{"a"}, true},
		{"all fail", func(s *[]string) []fakePool {
			return []fakePool{{name: "a", err: down, served: s}, {name: "b", err: down, served: s}}
		}, []string{"a", "b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var served []string
			var steps int
			out := Fallback(httptest.NewRecorder(), httptest.NewRequest("POST", "/chat/completions", nil), tt.chain(&served), failed,
				func(from, to fakePool, _ error) { steps++ })
			if !slices.Equal(served, tt.wantOrder) || out.Wrote != tt.wantWrote || out.Fallbacks != steps || steps != len(served)-1 {
				t.Errorf("served %v, wrote %v, fallbacks %d (told %d); want %v, wrote %v",
					served, out.Wrote, out.Fallbacks, steps, tt.wantOrder, tt.wantWrote)
			}
		})
	}
}

func TestTableChain(t *testing.T) {
	var served []string
	var tbl Table[fakePool]
	tbl.Add(fakePool{name: "local", served: &served}, []string{"hosted", "gone"})
	tbl.Add(fakePool{name: "hosted", served: &served}, nil)
	chain, ok := tbl.Chain("local")
	if !ok || len(chain) != 2 || chain[0].name != "local" || chain[1].name != "hosted" {
		t.Errorf("Chain(local) = %v, %v; want local then hosted, the unknown fallback left out", chain, ok)
	}
	if n := testing.AllocsPerRun(100, func() { tbl.Chain("local") }); n != 0 {
		t.Errorf("Chain allocates %v times", n)
	}
	if _, ok := tbl.Chain("other"); ok || tbl.Has("other") {
		t.Error("a model not configured has a chain")
	}
	if got := tbl.Names(); !slices.Equal(got, []string{"local", "hosted"}) {
		t.Errorf("Names = %v", got)
	}
}
