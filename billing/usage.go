package billing

import (
	"bytes"
	"errors"
	"math"
	"strconv"
)

// Bounds of the token counts a backend reports (docs/billing.md, "Usage
// from the backend").
const (
	// MaxReportedTokens bounds each count of one usage report: a /v1
	// answer, one round of a /v3 tool loop. It is ten times the largest
	// context window models offer (10 million tokens), so no real report
	// reaches it; a count beyond it is a backend's fault, and is read as
	// the bound rather than believed or dropped, so that the request is
	// still charged, at most the revision's cap.
	MaxReportedTokens = 100_000_000
	// MaxRequestTokens bounds each count of one request, summed over the
	// rounds of a /v3 tool loop. Sums of bounded counts stay far from
	// int64's range, and from the float64 range in which a metric
	// counter would stop counting single tokens.
	MaxRequestTokens = 1_000_000_000
)

// Usage is what a response consumed, in tokens.
type Usage struct {
	Prompt     int64
	Completion int64
	// Reasoning is the part of Completion the backend reports as
	// reasoning (completion_tokens_details.reasoning_tokens), when it
	// does; the /v1 meter does not read it.
	Reasoning int64
	// Estimated is true when the backend reported no usage and the
	// counts were estimated.
	Estimated bool
}

// Normalized returns u as pricing, metrics and clients may take one
// report: a negative count is 0, a count above MaxReportedTokens is
// MaxReportedTokens, and Reasoning is at most Completion. Every usage a
// backend reports, on /v1 and /v3, passes through it before anything
// reads it.
func (u Usage) Normalized() Usage {
	u.Prompt = clampTokens(u.Prompt, MaxReportedTokens)
	u.Completion = clampTokens(u.Completion, MaxReportedTokens)
	u.Reasoning = clampTokens(u.Reasoning, u.Completion)
	return u
}

// Plus returns the usage of a request of several rounds, u being the
// rounds so far and round the next one's report: round is normalised,
// each sum is at most MaxRequestTokens, and the sum is estimated if
// either part is.
func (u Usage) Plus(round Usage) Usage {
	round = round.Normalized()
	sum := func(a, b int64) int64 { return min(clampTokens(a, MaxRequestTokens)+b, MaxRequestTokens) }
	out := Usage{
		Prompt:     sum(u.Prompt, round.Prompt),
		Completion: sum(u.Completion, round.Completion),
		Reasoning:  sum(u.Reasoning, round.Reasoning),
		Estimated:  u.Estimated || round.Estimated,
	}
	out.Reasoning = min(out.Reasoning, out.Completion)
	return out
}

func clampTokens(n, bound int64) int64 { return max(0, min(n, bound)) }

// TokenCount is a token count as a backend writes it in a usage object.
// Besides a plain integer it takes what sloppy encoders send for one: a
// number with a fraction or an exponent (rounded up, since a fraction of
// a token was still spent) and integers beyond int64 (read as the
// largest int64). Normalized bounds the result. A value that is no
// number (a string, an object) is an error, so that a usage object
// holding one is not believed.
type TokenCount int64

var errNotACount = errors.New("billing: a token count that is not a number")

// UnmarshalJSON implements json.Unmarshaler. JSON null leaves n as it
// is, as it does for an int64.
func (n *TokenCount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*n = TokenCount(i)
		return nil
	}
	if len(b) == 0 || !(b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		return errNotACount
	}
	// A JSON number with a fraction or exponent, or one out of int64's
	// range: ParseFloat accepts every JSON number (and reports the out
	// of range ones as ±Inf, with an error that does not matter here).
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return errNotACount
	}
	switch f = math.Ceil(f); {
	case f >= math.MaxInt64:
		*n = math.MaxInt64
	case f <= math.MinInt64:
		*n = math.MinInt64
	default:
		*n = TokenCount(f)
	}
	return nil
}
