package billing

import (
	"math"
	"testing"

	"github.com/switchyardhq/switchyard/internal/tokenizer"
	"github.com/switchyardhq/switchyard/policy"
)

func TestHoldEstimate(t *testing.T) {
	a, b := policy.ProfileFor(policy.RevisionA), policy.ProfileFor(policy.RevisionB)
	for _, tc := range []struct {
		name          string
		profile       policy.Profile
		body          int64
		maxTokens     int64
		defaultTokens int64
		want          int64
	}{
		// 4,096 × $10/M = 4.096 cents, plus 25 prompt tokens: 4.1 → 4.
		{name: "no max_tokens holds the default", profile: b, body: 100, want: 4},
		{name: "a configured default", profile: b, body: 100, defaultTokens: 100_000, want: 100},
		{name: "max_tokens replaces the default", profile: b, body: 100, maxTokens: 50_000, want: 50},
		{name: "a tiny request holds the minimum", profile: b, body: 4, maxTokens: 1, want: 1},
		// 4 MB of body is 1M prompt tokens: 300 cents, plus 1000 for 1M out.
		{name: "the prompt counts at the input price", profile: a, body: 4_000_000, maxTokens: 1_000_000, want: 1300},
		{name: "revision B caps at 500", profile: b, body: 4_000_000, maxTokens: 1_000_000, want: 500},
		{name: "revision A has no cap", profile: a, maxTokens: 1_000_000_000, want: 1_000_000},
		{name: "huge values saturate, then the cap applies", profile: b, body: math.MaxInt64, maxTokens: math.MaxInt64, want: 500},
		{name: "a negative body counts as empty", profile: b, body: -1, maxTokens: 1, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HoldEstimate(tc.profile, tc.body, tc.maxTokens, tc.defaultTokens); got != tc.want {
				t.Fatalf("HoldEstimate(%d bytes, max %d, default %d) = %d, want %d",
					tc.body, tc.maxTokens, tc.defaultTokens, got, tc.want)
			}
		})
	}
}

// A hold is never below what the same tokens would be charged.
func TestHoldEstimateCoversTheCharge(t *testing.T) {
	p := policy.ProfileFor(policy.RevisionA)
	for body := int64(0); body < 50_000; body += 997 {
		for _, maxTokens := range []int64{1, 17, 4096, 70_000} {
			hold := HoldEstimate(p, body, maxTokens, 0)
			if charge := p.Price(tokenizer.Estimate(body), maxTokens); hold < charge {
				t.Fatalf("body %d, max %d: hold %d below charge %d", body, maxTokens, hold, charge)
			}
		}
	}
}
