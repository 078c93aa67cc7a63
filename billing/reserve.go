package billing

import (
	"github.com/switchyardhq/switchyard/internal/tokenizer"
	"github.com/switchyardhq/switchyard/policy"
)

// DefaultHoldTokens is the completion tokens a request that sets no
// max_tokens (or max_completion_tokens) is assumed to generate when its
// reservation is sized.
const DefaultHoldTokens = 4096

// HoldEstimate is the amount in cents to reserve against an account's
// balance before a request runs: its prompt, estimated at four bytes of
// request body per token, at the input price, plus maxTokens completion
// tokens at the output price, or defaultTokens when maxTokens is zero or
// negative (the request set none). A defaultTokens of zero or less means
// DefaultHoldTokens. It is priced like a charge, with p.Price, so it is at
// least the minimum charge and at most the revision's per-request cap
// when it has one.
//
// The estimate bounds what one round of generation can cost; a request
// whose real prompt is longer than its body (the /v3 system prompt, tool
// results, several rounds) can cost more, up to the cap.
func HoldEstimate(p policy.Profile, bodyBytes int64, maxTokens, defaultTokens int64) int64 {
	if defaultTokens <= 0 {
		defaultTokens = DefaultHoldTokens
	}
	if maxTokens <= 0 {
		maxTokens = defaultTokens
	}
	return p.Price(tokenizer.Estimate(max(bodyBytes, 0)), maxTokens)
}
