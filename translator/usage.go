package translator

import (
	"math"
	"unicode/utf8"
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
func (u *usageTotals) add(st *UpstreamStream) {
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
	u.completion += estimateTokens(c.Think + c.Text + c.Args)
	u.answer += estimateTokens(c.Text)
}

// estimateTokens assumes about four characters (or JSON bytes) per token,
// the usual figure for English text with BPE vocabularies.
func estimateTokens(chars int) int64 {
	return int64((chars + 3) / 4)
}

// Prompt estimate constants, after OpenAI's published accounting.
const (
	tokensPerMessage = 4  // role and message framing
	tokensPerImage   = 85 // a low-detail image
)

// estimatePrompt estimates the prompt tokens of a round from its text:
// message text, tool-call arguments and tool definitions at four
// characters per token, plus fixed costs per message and image. Image
// bytes are not text and are not counted as such.
func estimatePrompt(req UpstreamRequest) int64 {
	n := int64(0)
	for _, m := range req.Messages {
		n += tokensPerMessage
		switch c := m.Content.(type) {
		case string:
			n += estimateTokens(utf8.RuneCountInString(c))
		case []UpstreamPart:
			for _, p := range c {
				if p.Type == "image_url" {
					n += tokensPerImage
				} else {
					n += estimateTokens(utf8.RuneCountInString(p.Text))
				}
			}
		}
		for _, tc := range m.ToolCalls {
			n += estimateTokens(len(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments))
		}
	}
	for _, t := range req.Tools {
		n += estimateTokens(len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters))
	}
	return n
}

// answerShare estimates the visible answer's part of a round's
// completion tokens (answer_tokens, Revision A). Backends report only the
// total, sometimes with the reasoning part; the rest is split between
// answer text and tool-call arguments by their length.
func answerShare(r *UpstreamUsage, c Chars) int64 {
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
