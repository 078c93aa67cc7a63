package upstream

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkSplitter takes reasoning out of answer text. Reasoning models
// served without a reasoning parser (llama.cpp without
// --reasoning-format, vLLM without --reasoning-parser) write their
// reasoning into content as a leading <think>…</think> block; the client
// must never see it. Tags may arrive split across deltas, so text that
// could be the start of a tag is held back until it is decided.
//
// Only a block at the very start of the answer counts: a model that talks
// about the tag later in its answer is quoting it.
type thinkSplitter struct {
	state    uint8 // thinkStart, thinkInside, thinkPassing
	held     string
	trimLead bool // drop whitespace between </think> and the answer
}

const (
	thinkStart uint8 = iota
	thinkInside
	thinkPassing
)

// split returns the answer text and the reasoning text that s completes.
func (t *thinkSplitter) split(s string) (content, reasoning string) {
	switch t.state {
	case thinkStart:
		t.held += s
		lead := strings.TrimLeft(t.held, " \t\r\n")
		switch {
		case strings.HasPrefix(lead, thinkOpen):
			t.state = thinkInside
			rest := lead[len(thinkOpen):]
			t.held = ""
			return t.split(rest)
		case strings.HasPrefix(thinkOpen, lead):
			return "", "" // still undecided (possibly empty so far)
		default:
			t.state = thinkPassing
			content, t.held = t.held, ""
			return content, ""
		}
	case thinkInside:
		buf := t.held + s
		if i := strings.Index(buf, thinkClose); i >= 0 {
			t.state = thinkPassing
			t.held = ""
			t.trimLead = true
			c, _ := t.split(buf[i+len(thinkClose):])
			return c, buf[:i]
		}
		k := partialSuffix(buf, thinkClose)
		t.held = buf[len(buf)-k:]
		return "", buf[:len(buf)-k]
	default:
		if t.trimLead {
			s = strings.TrimLeft(s, " \t\r\n")
			if s == "" {
				return "", ""
			}
			t.trimLead = false
		}
		return s, ""
	}
}

// flush returns what is still held when the stream ends.
func (t *thinkSplitter) flush() (content, reasoning string) {
	held := t.held
	t.held = ""
	switch t.state {
	case thinkStart:
		return held, ""
	case thinkInside:
		return "", held // an unterminated block is still reasoning
	}
	return "", ""
}

// partialSuffix returns the length of the longest proper suffix of s that
// is a prefix of tag.
func partialSuffix(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}
