package policy

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// MTokPrice is what a million tokens cost, in hundredths of a cent, so
// that a price with four decimals of a dollar per million tokens ($0.075
// is 750) is exact. Charges stay in whole cents: only the request's total
// is rounded (see Price).
type MTokPrice int64

// CentsPerMTok is the price of c cents a million tokens. It saturates
// rather than wraps for prices beyond what MTokPrice holds.
func CentsPerMTok(c int64) MTokPrice {
	switch {
	case c > math.MaxInt64/100:
		return math.MaxInt64
	case c < math.MinInt64/100:
		return math.MinInt64
	}
	return MTokPrice(c * 100)
}

// ErrPriceFormat is returned for a price that is not a decimal number
// with at most as many decimals as MTokPrice holds.
var ErrPriceFormat = errors.New("not a price: use digits with at most four decimals of a dollar (two of a cent), such as 3, 0.075 or 7.5 cents")

// ParseUSDPerMTok parses dollars per million tokens with at most four
// decimals ("3", "0.075", "$0.0001"), without floating point.
func ParseUSDPerMTok(s string) (MTokPrice, error) {
	n, ok := parseFixed(strings.TrimPrefix(strings.TrimSpace(s), "$"), 4)
	if !ok {
		return 0, ErrPriceFormat
	}
	return MTokPrice(n), nil
}

// UnmarshalJSON reads cents per million tokens, the unit of the config
// fields *_cents_per_mtok: a whole number as before, or one with up to
// two decimals (7.5 is $0.075).
func (m *MTokPrice) UnmarshalJSON(b []byte) error {
	s := string(b)
	neg := strings.HasPrefix(s, "-")
	n, ok := parseFixed(strings.TrimPrefix(s, "-"), 2)
	if !ok {
		return errors.New("cents per million tokens: want a number with at most two decimals, such as 300 or 7.5, not " + s)
	}
	if neg {
		n = -n // kept, so that validation can name the negative price
	}
	*m = MTokPrice(n)
	return nil
}

// MarshalJSON writes cents per million tokens, whole when they are.
func (m MTokPrice) MarshalJSON() ([]byte, error) {
	return []byte(m.Cents()), nil
}

// Cents renders the price in cents per million tokens: "300", "7.5".
func (m MTokPrice) Cents() string {
	u := uint64(m)
	sign := ""
	if m < 0 {
		sign, u = "-", -u
	}
	s := sign + strconv.FormatUint(u/100, 10)
	if frac := u % 100; frac != 0 {
		s += strings.TrimRight("."+strconv.FormatUint(100+frac, 10)[1:], "0")
	}
	return s
}

// parseFixed reads a non-negative decimal with at most decimals places
// as an integer in units of 10^-decimals.
func parseFixed(s string, decimals int) (int64, bool) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || !digits(whole) || (hasFrac && (frac == "" || len(frac) > decimals || !digits(frac))) {
		return 0, false
	}
	frac += strings.Repeat("0", decimals-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	return n, err == nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ModelPrice is what a million tokens of one model cost.
// Negative prices count as zero.
type ModelPrice struct {
	InputPerMTok  MTokPrice `json:"input_cents_per_mtok"`
	OutputPerMTok MTokPrice `json:"output_cents_per_mtok"`
}

// ForModel is the profile with the prices of model: its entry in
// p.ModelPrices, or p's own prices for a model without one. Everything
// else, the minimum charge and the cap included, stays as it is. Charges
// are priced with p.ForModel(model).Price(...).
func (p Profile) ForModel(model string) Profile {
	if mp, ok := p.ModelPrices[model]; ok {
		p.InputPerMTok, p.OutputPerMTok = mp.InputPerMTok, mp.OutputPerMTok
	}
	return p
}

// ForHold is the profile with the prices a hold for a request naming
// model is estimated at: its entry in p.HoldPrices, else ForModel's.
func (p Profile) ForHold(model string) Profile {
	if hp, ok := p.HoldPrices[model]; ok {
		p.InputPerMTok, p.OutputPerMTok = hp.InputPerMTok, hp.OutputPerMTok
		return p
	}
	return p.ForModel(model)
}

// unitsPerCent is how many of what tokens times an MTokPrice counts make
// a cent: prices are in hundredths of a cent per million tokens, so the
// product is in hundred-millionths of a cent, exact, with nothing to
// round until the end.
const unitsPerCent = 100_000_000

// Price is the charge in cents of a request that used promptTokens input
// and completionTokens output tokens, at the prices of the profile (spec
// section 8; for a model of p.ModelPrices, call it on p.ForModel(model)),
// with prices in hundredths of a cent per million tokens:
//
//	cents = round_half_up((promptTokens*InputPerMTok + completionTokens*OutputPerMTok) / 1e8)
//
// then at least p.MinChargeCents and, when p.MaxChargeCents > 0, at most
// p.MaxChargeCents (the cap wins should the two cross). With the default
// prices ($3 and $10 per million tokens), 1,000 prompt and 200 completion
// tokens cost 0.5 cents and so 1 cent; 5,000 prompt tokens cost 1.5 cents
// and so 2; at $0.075 per million (7.5 cents), a million input tokens
// cost 8 cents.
//
// The counts are the full totals over every round of the request,
// service-added context and reasoning included. Negative counts and
// prices count as zero. The arithmetic is exact for any int64 inputs:
// the sum is formed in 128 bits, and a charge beyond int64 saturates at
// math.MaxInt64 (before the cap) rather than wrapping into a credit.
func (p Profile) Price(promptTokens, completionTokens int64) int64 {
	inHi, inLo := bits.Mul64(nonNegative(promptTokens), nonNegative(int64(p.InputPerMTok)))
	outHi, outLo := bits.Mul64(nonNegative(completionTokens), nonNegative(int64(p.OutputPerMTok)))
	// Each product is below 2^126, so neither sum can overflow 128 bits.
	lo, carry := bits.Add64(inLo, outLo, 0)
	hi, _ := bits.Add64(inHi, outHi, carry)
	lo, carry = bits.Add64(lo, unitsPerCent/2, 0) // half up
	hi += carry

	cents := int64(math.MaxInt64)
	// Div64 needs a quotient that fits 64 bits, which hi < divisor ensures.
	if hi < unitsPerCent {
		if q, _ := bits.Div64(hi, lo, unitsPerCent); q <= math.MaxInt64 {
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
