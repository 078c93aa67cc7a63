package toolset

import (
	"context"
	"slices"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/search"
)

type nopMemory struct{}

func (nopMemory) Facts(context.Context, string, string) ([]string, error)     { return nil, nil }
func (nopMemory) Remember(context.Context, string, string, string, int) error { return nil }

func offered(reg *tools.Registry, m tools.Mode) []string {
	names := reg.Offer(m).Names()
	slices.Sort(names)
	return names
}

func TestNew(t *testing.T) {
	full := tools.Mode{Files: true, Search: true, EndUser: true}
	tests := []struct {
		name   string
		search search.Config
		mode   tools.Mode
		want   []string
	}{
		{name: "no search provider: no web_search", mode: full, want: []string{"open_url", "remember"}},
		{name: "a provider offers web_search", search: search.Config{SearxNGURL: "http://127.0.0.1:8888"}, mode: full,
			want: []string{"open_url", "remember", "web_search"}},
		{name: "skip_search without user links", search: search.Config{SearxNGURL: "http://127.0.0.1:8888"},
			mode: tools.Mode{Files: true, EndUser: true}, want: []string{"remember"}},
		{name: "skip_search with user links", search: search.Config{SearxNGURL: "http://127.0.0.1:8888"},
			mode: tools.Mode{Files: true, UserLinks: true}, want: []string{"open_url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := New(Config{Memory: nopMemory{}, Search: tt.search})
			if err != nil {
				t.Fatal(err)
			}
			if got := offered(reg, tt.mode); !slices.Equal(got, tt.want) {
				t.Errorf("offered %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := New(Config{Memory: nopMemory{}, Search: search.Config{SearxNGURL: "ftp://x"}}); err == nil {
		t.Error("a bad SearxNG URL was accepted")
	}
}
