package policy

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestPrice(t *testing.T) {
	a, b := ProfileFor(RevisionA), ProfileFor(RevisionB)
	// noMin shows the rounding that the 1-cent minimum hides.
	noMin := b
	noMin.MinChargeCents = 0
	// fine is priced at $0.075 and $0.30 per million tokens.
	fine := Profile{InputPerMTok: 750, OutputPerMTok: 3000}
	tests := []struct {
		name               string
		profile            Profile
		prompt, completion int64
		want               int64
	}{
		{name: "no tokens pay the minimum", profile: b, want: 1},
		{name: "one token pays the minimum", profile: b, prompt: 1, want: 1},
		{name: "no tokens without a minimum", profile: noMin, want: 0},
		{name: "just under half a cent rounds down", profile: noMin, prompt: 1666, want: 0},       // 0.4998
		{name: "half a cent rounds up", profile: noMin, prompt: 1000, completion: 200, want: 1},   // 0.5
		{name: "output half a cent rounds up", profile: noMin, completion: 500, want: 1},          // 0.5
		{name: "just under one and a half", profile: noMin, prompt: 4999, want: 1},                // 1.4997
		{name: "one and a half rounds up", profile: noMin, prompt: 5000, want: 2},                 // 1.5
		{name: "just under two and a half", profile: noMin, prompt: 3, completion: 2499, want: 2}, // 2.4999
		{name: "two and a half rounds up", profile: noMin, completion: 2500, want: 3},
		{name: "input and output add before rounding", profile: noMin, prompt: 1000, completion: 1200, want: 2}, // 0.3 + 1.2
		{name: "one million of each", profile: a, prompt: 1_000_000, completion: 1_000_000, want: 1300},
		{name: "typical chat", profile: b, prompt: 12_345, completion: 678, want: 4}, // 3.7035 + 0.678
		{name: "just under the cap", profile: b, prompt: 1_663_333, want: 499},       // 498.9999
		{name: "rounds up to the cap", profile: b, prompt: 1_665_000, want: 500},     // 499.5
		{name: "over the cap", profile: b, prompt: 1_000_000_000, want: 500},
		{name: "revision A has no cap", profile: a, prompt: 1_000_000_000, want: 300_000},
		{name: "negative counts are zero", profile: noMin, prompt: -5000, completion: -1, want: 0},
		{name: "negative prices are zero", profile: Profile{InputPerMTok: CentsPerMTok(-300), OutputPerMTok: CentsPerMTok(1000)}, prompt: 1_000_000, completion: 1_000_000, want: 1000},
		{name: "largest exact product", profile: a, prompt: math.MaxInt64 / 1000, completion: 0, want: 2_767_011_611_056}, // 2,767,011,611,056.4325
		{name: "products beyond int64 stay exact", profile: a, prompt: math.MaxInt64, completion: math.MaxInt64, want: 11_990_383_647_911_209},
		{name: "overflow stays at the cap", profile: b, prompt: math.MaxInt64, completion: math.MaxInt64, want: 500},
		{name: "beyond int64 cents saturates", profile: Profile{InputPerMTok: CentsPerMTok(math.MaxInt64), OutputPerMTok: CentsPerMTok(math.MaxInt64)}, prompt: math.MaxInt64, completion: math.MaxInt64, want: math.MaxInt64},
		{name: "four decimals: $0.075 a million rounds 7.5 up", profile: fine, prompt: 1_000_000, want: 8},
		{name: "four decimals: input and output add before rounding", profile: fine, prompt: 1_000_000, completion: 1_000_000, want: 38}, // 7.5 + 30
		{name: "four decimals: just under half a cent", profile: fine, prompt: 66_666, want: 0},                                          // 0.499995
		{name: "four decimals: $0.0001 a million", profile: Profile{InputPerMTok: 1}, prompt: 50_000_000, want: 1},                       // 0.5
		{name: "minimum above the cap: the cap wins", profile: Profile{MinChargeCents: 10, MaxChargeCents: 5}, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.profile.Price(tt.prompt, tt.completion); got != tt.want {
				t.Errorf("Price(%d, %d) = %d, want %d", tt.prompt, tt.completion, got, tt.want)
			}
			if got, want := tt.profile.Price(tt.prompt, tt.completion), refPrice(tt.profile, tt.prompt, tt.completion); got != want {
				t.Errorf("Price(%d, %d) = %d, the big.Int reference says %d", tt.prompt, tt.completion, got, want)
			}
		})
	}
}

// TestPriceMatchesReference compares Price with arbitrary-precision
// arithmetic over counts and prices from small to the extremes of int64.
func TestPriceMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	value := func() int64 {
		// Spread over magnitudes, not just large values.
		return r.Int64N(math.MaxInt64) >> r.IntN(64)
	}
	for range 20_000 {
		p := Profile{
			InputPerMTok:   MTokPrice(value()),
			OutputPerMTok:  MTokPrice(value()),
			MinChargeCents: r.Int64N(3),
			MaxChargeCents: []int64{0, 500, math.MaxInt64}[r.IntN(3)],
		}
		prompt, completion := value(), value()
		if got, want := p.Price(prompt, completion), refPrice(p, prompt, completion); got != want {
			t.Fatalf("Price(%+v, %d, %d) = %d, want %d", p, prompt, completion, got, want)
		}
	}
}

// refPrice is Price written the obvious way, in big.Int.
func refPrice(p Profile, prompt, completion int64) int64 {
	clampZero := func(n int64) *big.Int { return big.NewInt(max(n, 0)) }
	total := new(big.Int).Mul(clampZero(prompt), clampZero(int64(p.InputPerMTok)))
	total.Add(total, new(big.Int).Mul(clampZero(completion), clampZero(int64(p.OutputPerMTok))))
	total.Add(total, big.NewInt(50_000_000))
	total.Quo(total, big.NewInt(100_000_000))
	cents := int64(math.MaxInt64)
	if total.IsInt64() {
		cents = total.Int64()
	}
	cents = max(cents, p.MinChargeCents)
	if p.MaxChargeCents > 0 {
		cents = min(cents, p.MaxChargeCents)
	}
	return cents
}

func TestForModel(t *testing.T) {
	b := ProfileFor(RevisionB)
	b.ModelPrices = map[string]ModelPrice{
		"small": {InputPerMTok: CentsPerMTok(15), OutputPerMTok: CentsPerMTok(60)},
		"large": {InputPerMTok: CentsPerMTok(1500), OutputPerMTok: CentsPerMTok(7500)},
	}
	tests := []struct {
		name               string
		model              string
		prompt, completion int64
		want               int64
	}{
		{name: "a priced model", model: "small", prompt: 1_000_000, completion: 1_000_000, want: 75},
		{name: "another priced model", model: "large", prompt: 10_000, completion: 10_000, want: 90},
		{name: "an unpriced model costs the profile's prices", model: "other", prompt: 1_000_000, completion: 1_000_000, want: 500},
		{name: "the cap still applies", model: "large", prompt: 1_000_000, completion: 0, want: 500},
		{name: "the minimum still applies", model: "small", prompt: 10, want: 1},
		{name: "names are exact", model: "Small", prompt: 1_000_000, want: 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.ForModel(tt.model).Price(tt.prompt, tt.completion); got != tt.want {
				t.Errorf("ForModel(%q).Price(%d, %d) = %d, want %d", tt.model, tt.prompt, tt.completion, got, tt.want)
			}
		})
	}
	if b.InputPerMTok != CentsPerMTok(300) {
		t.Errorf("ForModel changed the profile it was called on")
	}
}

func TestForHold(t *testing.T) {
	b := ProfileFor(RevisionB)
	b.ModelPrices = map[string]ModelPrice{"small": {InputPerMTok: CentsPerMTok(15), OutputPerMTok: CentsPerMTok(60)}}
	b.HoldPrices = map[string]ModelPrice{"small": {InputPerMTok: CentsPerMTok(300), OutputPerMTok: CentsPerMTok(1000)}}
	if got := b.ForHold("small").Price(1_000_000, 0); got != 300 {
		t.Errorf("ForHold(small) holds at %d cents a million input tokens, want its chain's 300", got)
	}
	if got := b.ForModel("small").Price(1_000_000, 0); got != 15 {
		t.Errorf("ForModel(small) charges %d cents a million input tokens, want its own 15", got)
	}
	if got := b.ForHold("other").Price(1_000_000, 0); got != 300 {
		t.Errorf("ForHold of a model without hold prices = %d, want ForModel's 300", got)
	}
}

func TestParseUSDPerMTok(t *testing.T) {
	tests := []struct {
		in   string
		want MTokPrice
		bad  bool
	}{
		{in: "3", want: CentsPerMTok(300)},
		{in: "0.075", want: 750},
		{in: "$0.0001", want: 1},
		{in: "12.5", want: CentsPerMTok(1250)},
		{in: "0.00001", bad: true},
		{in: "-1", bad: true},
		{in: "1e3", bad: true},
		{in: ".5", bad: true},
		{in: "5.", bad: true},
		{in: "", bad: true},
		{in: "99999999999999999999", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseUSDPerMTok(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrPriceFormat) {
				t.Errorf("ParseUSDPerMTok(%q) = %d, %v; want ErrPriceFormat", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseUSDPerMTok(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestModelPriceJSON(t *testing.T) {
	tests := []struct {
		in   string
		want ModelPrice
		out  string
	}{
		{in: `{"input_cents_per_mtok":300,"output_cents_per_mtok":1000}`, want: ModelPrice{CentsPerMTok(300), CentsPerMTok(1000)}, out: `{"input_cents_per_mtok":300,"output_cents_per_mtok":1000}`},
		{in: `{"input_cents_per_mtok":7.5,"output_cents_per_mtok":0.01}`, want: ModelPrice{750, 1}, out: `{"input_cents_per_mtok":7.5,"output_cents_per_mtok":0.01}`},
		{in: `{"input_cents_per_mtok":7.50,"output_cents_per_mtok":-3}`, want: ModelPrice{750, CentsPerMTok(-3)}, out: `{"input_cents_per_mtok":7.5,"output_cents_per_mtok":-3}`},
	}
	for _, tt := range tests {
		var got ModelPrice
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil || got != tt.want {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if out, err := json.Marshal(got); err != nil || string(out) != tt.out {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", got, out, err, tt.out)
		}
	}
	for _, bad := range []string{`7.505`, `1e3`, `"7.5"`, `null`, `true`, `99999999999999999999`} {
		var got MTokPrice
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("Unmarshal(%s) = %d, want an error", bad, got)
		}
	}
}
