package upstream

import "unicode/utf8"

// EstimateTokens assumes about four characters (or JSON bytes) per token,
// the usual figure for English text with BPE vocabularies.
func EstimateTokens(chars int) int64 {
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
func estimatePrompt(req Request) int64 {
	n := int64(0)
	for _, m := range req.Messages {
		n += tokensPerMessage
		switch c := m.Content.(type) {
		case string:
			n += EstimateTokens(utf8.RuneCountInString(c))
		case []Part:
			for _, p := range c {
				if p.Type == "image_url" {
					n += tokensPerImage
				} else {
					n += EstimateTokens(utf8.RuneCountInString(p.Text))
				}
			}
		}
		for _, tc := range m.ToolCalls {
			n += EstimateTokens(len(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments))
		}
	}
	for _, t := range req.Tools {
		n += EstimateTokens(len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters))
	}
	return n
}
