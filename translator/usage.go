package translator

import (
	"math"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/translator/upstream"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// usageTotals sums usage over the rounds of a request. Its counts are
// never negative and never above billing.MaxRequestTokens, and answer
// never above completion: the sum goes through billing.Usage.Plus, as
// every report went through billing.Usage.Normalized.
type usageTotals struct {
	prompt, completion, answer int64
	estimated                  bool
}

// add counts a finished or broken round. A backend that reported usage
// is believed, within the bounds of billing.Usage.Normalized; otherwise
// (no usage chunk, or the stream broke before it, also before its first
// token) the round is estimated from its prompt and text: the backend
// accepted the round, so it read the prompt, and what it generated
// before the break never reached the meter. Fail closed.
func (u *usageTotals) add(st *upstream.Stream) {
	c := st.Chars()
	if r := st.Usage(); r != nil {
		u.sum(*r, answerShare(r.Normalized(), c))
		return
	}
	u.sum(billing.Usage{
		Prompt:     st.PromptEstimate(),
		Completion: upstream.EstimateTokens(c.Think + c.Text + c.Args),
		Estimated:  true,
	}, upstream.EstimateTokens(c.Text))
}

// addUnanswered counts a round that was sent and whose client left
// before its answer began: the backend may be working on the prompt
// already, as the /v1 meter assumes of such a request too.
func (u *usageTotals) addUnanswered(req upstream.Request) {
	u.sum(billing.Usage{Prompt: upstream.EstimatePrompt(req), Estimated: true}, 0)
}

// sum adds a round's usage and its answer's share of the completion.
func (u *usageTotals) sum(round billing.Usage, answer int64) {
	round = round.Normalized()
	total := billing.Usage{Prompt: u.prompt, Completion: u.completion, Estimated: u.estimated}.Plus(round)
	u.prompt, u.completion, u.estimated = total.Prompt, total.Completion, total.Estimated
	u.answer = min(u.answer+min(max(answer, 0), round.Completion), u.completion)
}

// answerShare estimates the visible answer's part of a round's
// completion tokens (answer_tokens, Revision A). Backends report only the
// total, sometimes with the reasoning part; the rest is split between
// answer text and tool-call arguments by their length.
func answerShare(r billing.Usage, c wire.Chars) int64 {
	if c.Text == 0 {
		return 0
	}
	rest := r.Completion
	parts := c.Think + c.Text + c.Args
	if r.Reasoning > 0 {
		rest -= r.Reasoning
		parts = c.Text + c.Args
	}
	if rest <= 0 || parts == 0 {
		return 0
	}
	return int64(math.Round(float64(rest) * float64(c.Text) / float64(parts)))
}
