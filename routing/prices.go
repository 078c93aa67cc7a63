package routing

import (
	"maps"

	"github.com/switchyardhq/switchyard/policy"
)

// Priced is a model as pricing sees it: its own prices, if configured,
// and the models that may answer in its place.
type Priced struct {
	Name      string
	Price     *policy.ModelPrice // nil: the profile's
	Fallbacks []string
}

// ApplyPrices adds the models' prices to the profile's per-model prices,
// and holds a request for a model with fallbacks at the dearest prices
// of its chain, direction by direction: any model of the chain may
// answer, each charged at its own prices.
func ApplyPrices(p *policy.Profile, models []Priced) {
	cloned := false
	for _, m := range models {
		if m.Price == nil {
			continue
		}
		if !cloned {
			p.ModelPrices = maps.Clone(p.ModelPrices)
			if p.ModelPrices == nil {
				p.ModelPrices = make(map[string]policy.ModelPrice)
			}
			cloned = true
		}
		p.ModelPrices[m.Name] = *m.Price
	}
	holds := make(map[string]policy.ModelPrice)
	for _, m := range models {
		if len(m.Fallbacks) == 0 {
			continue
		}
		own := p.ForModel(m.Name)
		hold := policy.ModelPrice{InputPerMTok: own.InputPerMTok, OutputPerMTok: own.OutputPerMTok}
		for _, f := range m.Fallbacks {
			fp := p.ForModel(f)
			hold.InputPerMTok = max(hold.InputPerMTok, fp.InputPerMTok)
			hold.OutputPerMTok = max(hold.OutputPerMTok, fp.OutputPerMTok)
		}
		if hold.InputPerMTok != own.InputPerMTok || hold.OutputPerMTok != own.OutputPerMTok {
			holds[m.Name] = hold
		}
	}
	if len(holds) > 0 {
		p.HoldPrices = holds
	}
}
