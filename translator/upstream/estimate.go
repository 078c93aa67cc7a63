package upstream

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/tokenizer"
)

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
		if t := conv.texts[i]; m.Parts == nil && t != (span{}) && text.Spent() {
			// Past the budget a kept text counts only by its length,
			// which its JSON tells without decoding it.
			text.AddBytes(int64(decodedLen(conv.encoded[t.start:t.end])))
		} else if m.Parts == nil {
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

// decodedLen is the length of the string that json.Unmarshal decodes
// from the JSON string s, quotes included, which must be valid: escapes
// count as the runes they stand for, a lone surrogate and each byte that
// is not UTF-8 as U+FFFD, as encoding/json decodes them.
func decodedLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	n := 0
	s = s[1 : len(s)-1]
	for len(s) > 0 {
		switch c := s[0]; {
		case c == '\\' && len(s) >= 6 && s[1] == 'u':
			r := hex4(s[2:6])
			s = s[6:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if pair := utf16.DecodeRune(r, hex4(s[2:6])); pair != unicode.ReplacementChar {
						n += utf8.RuneLen(pair)
						s = s[6:]
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			n += utf8.RuneLen(r)
		case c == '\\':
			n++
			s = s[min(2, len(s)):] // a cut escape ends the count, not the process
		case c < utf8.RuneSelf:
			n++
			s = s[1:]
		default:
			r, size := utf8.DecodeRune(s)
			n += utf8.RuneLen(r)
			s = s[size:]
		}
	}
	return n
}

// hex4 is the rune of four hex digits, or -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
