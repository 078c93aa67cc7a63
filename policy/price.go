package policy

import (
	"math"
	"math/bits"
)

// ModelPrice is what a million tokens of one model cost, in cents.
// Negative prices count as zero.
type ModelPrice struct {
	InputCentsPerMTok  int64 `json:"input_cents_per_mtok"`
	OutputCentsPerMTok int64 `json:"output_cents_per_mtok"`
}

// ForModel is the profile with the prices of model: its entry in
// p.ModelPrices, or p's own prices for a model without one. Everything
// else, the minimum charge and the cap included, stays as it is. Charges
// are priced with p.ForModel(model).Price(...).
func (p Profile) ForModel(model string) Profile {
	if mp, ok := p.ModelPrices[model]; ok {
		p.InputCentsPerMTok, p.OutputCentsPerMTok = mp.InputCentsPerMTok, mp.OutputCentsPerMTok
	}
	return p
}

// ForHold is the profile with the prices a hold for a request naming
// model is estimated at: its entry in p.HoldPrices, else ForModel's.
func (p Profile) ForHold(model string) Profile {
	if hp, ok := p.HoldPrices[model]; ok {
		p.InputCentsPerMTok, p.OutputCentsPerMTok = hp.InputCentsPerMTok, hp.OutputCentsPerMTok
		return p
	}
	return p.ForModel(model)
}

// microsPerCent is how many millionths of a cent make a cent. Prices are
// in cents per million tokens, so tokens times price is in millionths of
// a cent: exact, with nothing to round until the end.
const microsPerCent = 1_000_000

// Price is the charge in cents of a request that used promptTokens input
// and completionTokens output tokens, at the prices of the profile (spec
// section 8; for a model of p.ModelPrices, call it on p.ForModel(model)):
//
//	cents = round_half_up((promptTokens*InputCentsPerMTok + completionTokens*OutputCentsPerMTok) / 1e6)
//
// then at least p.MinChargeCents and, when p.MaxChargeCents > 0, at most
// p.MaxChargeCents (the cap wins should the two cross). With the default
// prices ($3 and $10 per million tokens), 1,000 prompt and 200 completion
// tokens cost 0.5 cents and so 1 cent; 5,000 prompt tokens cost 1.5 cents
// and so 2.
//
// The counts are the full totals over every round of the request,
// service-added context and reasoning included. Negative counts and
// prices count as zero. The arithmetic is exact for any int64 inputs:
// the sum is formed in 128 bits, and a charge beyond int64 saturates at
// math.MaxInt64 (before the cap) rather than wrapping into a credit.
func (p Profile) Price(promptTokens, completionTokens int64) int64 {
	inHi, inLo := bits.Mul64(nonNegative(promptTokens), nonNegative(p.InputCentsPerMTok))
	outHi, outLo := bits.Mul64(nonNegative(completionTokens), nonNegative(p.OutputCentsPerMTok))
	// Each product is below 2^126, so neither sum can overflow 128 bits.
	lo, carry := bits.Add64(inLo, outLo, 0)
	hi, _ := bits.Add64(inHi, outHi, carry)
	lo, carry = bits.Add64(lo, microsPerCent/2, 0) // half up
	hi += carry

	cents := int64(math.MaxInt64)
	// Div64 needs a quotient that fits 64 bits, which hi < divisor ensures.
	if hi < microsPerCent {
		if q, _ := bits.Div64(hi, lo, microsPerCent); q <= math.MaxInt64 {
			cents = int64(q)
		}
	}
	if cents < p.MinChargeCents {
		cents = p.MinChargeCents
	}
	if p.MaxChargeCents > 0 && cents > p.MaxChargeCents {
		cents = p.MaxChargeCents
	}
	return cents
}

func nonNegative(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}
