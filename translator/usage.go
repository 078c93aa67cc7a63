package translator

import (
	"math"

	"github.com/switchyardhq/switchyard/translator/upstream"
)

// usageTotals sums usage over the rounds of a request.
type usageTotals struct {
	prompt, completion, answer int64
	estimated                  bool
}

// add counts a finished or broken round. A backend that reported usage
// is believed; otherwise (no usage chunk, or the stream broke before it)
// the round is estimated from its text. A round that produced nothing
// adds nothing: the backend failed before working on it, and a request
// that failed that early is not charged.
func (u *usageTotals) add(st *upstream.Stream) {
	c := st.Chars()
	if r := st.Usage(); r != nil {
		u.prompt += r.PromptTokens
		u.completion += r.CompletionTokens
		u.answer += answerShare(r, c)
		return
	}
	if c.Think+c.Text+c.Args == 0 {
		return
	}
	u.estimated = true
	u.prompt += st.PromptEstimate()
	u.completion += upstream.EstimateTokens(c.Think + c.Text + c.Args)
	u.answer += upstream.EstimateTokens(c.Text)
}

// answerShare estimates the visible answer's part of a round's
// completion tokens (answer_tokens, Revision A). Backends report only the
// total, sometimes with the reasoning part; the rest is split between
// answer text and tool-call arguments by their length.
func answerShare(r *upstream.Usage, c upstream.Chars) int64 {
	if c.Text == 0 {
		return 0
	}
	rest := r.CompletionTokens
	parts := c.Think + c.Text + c.Args
	if r.ReasoningTokens > 0 {
		rest -= r.ReasoningTokens
		parts = c.Text + c.Args
	}
	if rest <= 0 || parts == 0 {
		return 0
	}
	return int64(math.Round(float64(rest) * float64(c.Text) / float64(parts)))
}
