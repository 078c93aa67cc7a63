package demobackend

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// maxWordRunes bounds one word token, so that long unbroken strings such
// as URLs or base64 cost roughly what a BPE vocabulary would charge
// instead of a single token.
const maxWordRunes = 16

// Tokens splits s into the pieces a streamed answer is sent in. The pieces
// concatenate back to s exactly. A piece is:
//
//   - a run of letters, digits and marks (at most 16 runes), or
//   - one CJK ideograph, kana or hangul syllable, or
//   - one other character (punctuation, symbol),
//
// each carrying the whitespace that precedes it, the way BPE vocabularies
// glue a leading space onto a word. Whitespace at the very end of s is a
// piece of its own.
func Tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := nextToken(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// CountTokens is len(Tokens(s)), without allocating.
func CountTokens(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i = nextToken(s, i)
	}
	return n
}

// nextToken returns the end of the piece that starts at s[i].
func nextToken(s string, i int) int {
	// Leading whitespace belongs to the piece that follows it.
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return i
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	i += n
	if !isWordRune(r) || isSingleRuneWord(r) {
		return i
	}
	for runes := 1; i < len(s) && runes < maxWordRunes; runes++ {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) || isSingleRuneWord(r) {
			break
		}
		i += n
	}
	return i
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isSingleRuneWord(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Token costs that mirror OpenAI's published accounting closely enough to
// make prompts with more messages, tools or images cost more.
const (
	tokensPerMessage = 3  // role and message framing
	tokensPerReply   = 3  // priming of the assistant's answer
	tokensPerImage   = 85 // OpenAI's charge for a low-detail image
)

// PromptTokens is the prompt_tokens figure reported for req: for each
// message 3 tokens of framing plus the tokens of its text, tool-call names
// and arguments, and 85 per image part; the JSON of every offered tool;
// and 3 tokens that prime the reply.
func PromptTokens(req *ChatRequest) int {
	n := tokensPerReply
	for _, m := range req.Messages {
		n += tokensPerMessage + CountTokens(m.Text())
		for _, p := range m.Parts() {
			if p.Type == "image_url" {
				n += tokensPerImage
			}
		}
		for _, tc := range m.ToolCalls {
			n += CountTokens(tc.Function.Name) + CountTokens(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		b, _ := json.Marshal(t)
		n += CountTokens(string(b))
	}
	return n
}
