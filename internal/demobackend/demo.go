package demobackend

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// quoteRunes bounds how much of the user's message the demo answer
// quotes back.
const quoteRunes = 60

// DemoReply is the answer to a request Options.Answer leaves. It depends
// only on the request, so the same request always gets the same answer:
//
//	Demo backend reply. Your message has 7 tokens (digest 6c5382c7): "Hello there, how are you?"
//
// The digest is the first 8 hex digits of the SHA-256 of the last user
// message's text. After a tool result the answer acknowledges the result
// instead; in JSON mode (response_format json_object or json_schema) the
// same facts come as a JSON object. With reasoning, a one-sentence
// reasoning_content precedes the answer. A user message that asks for a
// deliverable, a search or the reading of a link gets a call of the
// matching tool instead, when the request offers it (see demoTool).
func DemoReply(req *ChatRequest, reasoning bool) Reply {
	var r Reply
	last := req.Messages[len(req.Messages)-1]
	subject, text := "message", req.LastUserText()
	if last.Role == "tool" {
		subject, text = "tool result", last.Text()
	}
	digest := sha256.Sum256([]byte(text))
	sum := hex.EncodeToString(digest[:4])
	tokens := CountTokens(text)
	if last.Role == "user" {
		if call, ok := demoTool(req); ok {
			r.ToolCalls = []ToolCall{call}
			return r
		}
	}

	if req.jsonMode() {
		b, _ := json.Marshal(struct {
			Reply  string `json:"reply"`
			Of     string `json:"of"`
			Tokens int    `json:"tokens"`
			Digest string `json:"digest"`
		}{"demo", subject, tokens, sum})
		r.Content = string(b)
	} else {
		r.Content = fmt.Sprintf("Demo backend reply. Your %s has %s (digest %s): %q",
			subject, plural(tokens, "token"), sum, quote(text))
	}
	if reasoning {
		r.Reasoning = fmt.Sprintf("The %s has %s; I will echo its digest %s.", subject, plural(tokens, "token"), sum)
	}
	return r
}

// quote returns the start of s on one line, at most quoteRunes runes.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= quoteRunes {
		return s
	}
	runes := []rune(s)
	return string(runes[:quoteRunes]) + "…"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
