package translator

import "github.com/switchyardhq/switchyard/policy"

// profileCost prices usage by the profile's per-token prices (spec 8):
// input and output tokens at their price per million, rounded half up to
// whole cents, at least the minimum and at most the cap (when set). It is
// what cost_cents shows when no UsageRecorder settles the charge.
func profileCost(p policy.Profile, prompt, completion int64) int64 {
	micro := prompt*p.InputCentsPerMTok + completion*p.OutputCentsPerMTok // millionths of a cent
	cents := (micro + 500_000) / 1_000_000
	if cents < p.MinChargeCents {
		cents = p.MinChargeCents
	}
	if p.MaxChargeCents > 0 && cents > p.MaxChargeCents {
		cents = p.MaxChargeCents
	}
	return cents
}
