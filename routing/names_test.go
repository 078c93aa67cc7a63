package routing

import (
	"slices"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
)

func TestModelNames(t *testing.T) {
	got := ModelNames([]*Model{{Name: "local"}, {Name: "hosted"}}, "llama", map[string]policy.ModelPrice{"priced": {}})
	slices.Sort(got)
	if want := []string{"hosted", "llama", "local", "priced"}; !slices.Equal(got, want) {
		t.Errorf("ModelNames = %q, want %q", got, want)
	}
}
