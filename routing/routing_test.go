package routing

import (
	"testing"

	"github.com/switchyardhq/switchyard/policy"
)

// A model with dearer fallbacks holds at the dearest prices of its chain,
// direction by direction, and is still charged at its own.
func TestModelHoldPrices(t *testing.T) {
	p := policy.ProfileFor(policy.RevisionB)
	price := func(in, out int64) *policy.ModelPrice {
		return &policy.ModelPrice{InputPerMTok: policy.CentsPerMTok(in), OutputPerMTok: policy.CentsPerMTok(out)}
	}
	ApplyPrices(&p, []Priced{
		{Name: "local", Price: price(10, 20), Fallbacks: []string{"hosted", "batch"}},
		{Name: "hosted", Price: price(250, 1000)},
		{Name: "batch", Price: price(500, 50)},
		{Name: "cheap-fallback", Price: price(900, 900), Fallbacks: []string{"local"}},
	})
	if got, want := p.HoldPrices["local"], (policy.ModelPrice{InputPerMTok: policy.CentsPerMTok(500), OutputPerMTok: policy.CentsPerMTok(1000)}); got != want {
		t.Errorf("local holds at %+v, want %+v", got, want)
	}
	if _, ok := p.HoldPrices["cheap-fallback"]; ok {
		t.Errorf("a model whose fallbacks are cheaper got hold prices: %+v", p.HoldPrices["cheap-fallback"])
	}
	if got := p.ForModel("local").Price(1_000_000, 0); got != 10 {
		t.Errorf("local is charged %d cents a million input tokens, want its own 10", got)
	}
}
