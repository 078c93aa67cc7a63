package upstream

import "github.com/switchyardhq/switchyard/internal/tokenizer"

// EstimateTokens estimates the tokens of chars characters (or JSON bytes)
// at about four a token, the usual figure for English text with BPE
// vocabularies. It is for text that is no longer at hand, such as a
// round's answer, of which a Stream keeps only the length; text at hand
// is counted with the tokenizer (tokenizer.Count).
func EstimateTokens(chars int) int64 {
	return tokenizer.Estimate(int64(chars))
}

// Prompt estimate constants, after OpenAI's published accounting.
const (
	tokensPerMessage = 4  // role and message framing
	tokensPerImage   = 85 // a low-detail image
)

// estimatePrompt estimates the prompt tokens of a round: the tokens of
// its message text, tool-call arguments and tool definitions, plus fixed
// costs per message and image. Image bytes are not text and are not
// counted as such. It runs for every round, before the backend says
// whether it reports usage, so the tokenizer sees only the first
// tokenizer.DefaultBudget bytes and the rest is counted at the ratio
// found there (tokenizer.Counter).
func estimatePrompt(req Request) int64 {
	var text tokenizer.Counter
	n := int64(0)
	conv := req.Messages
	for i, m := range conv.messages {
		n += tokensPerMessage
		if m.Parts == nil {
			text.Add(conv.content(i))
		}
		for _, p := range m.Parts {
			if p.Type == "image_url" {
				n += tokensPerImage
			} else {
				text.Add(p.Text)
			}
		}
		for _, tc := range m.ToolCalls {
			text.Add(tc.Function.Name)
			text.Add(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		text.Add(t.Function.Name)
		text.Add(t.Function.Description)
		text.AddText(t.Function.Parameters)
	}
	return n + text.Tokens()
}
