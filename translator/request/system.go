package request

import (
	"fmt"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// applySystemRule applies the revision's system message rule to the
// combined text of the system and developer messages. With
// Profile.MaxSystemChars set (Revision B) a longer text is refused.
// Otherwise (Revision A) it is shortened to fit; see shortenSystem.
func applySystemRule(msgs []Message, lim Limits) (shortened bool, err error) {
	total := 0
	for _, m := range msgs {
		if m.IsSystem() {
			total += utf8.RuneCountInString(m.Text())
		}
	}
	if max := lim.Profile.MaxSystemChars; max > 0 {
		if total > max {
			return false, invalid(CodeSystemMessageTooLong, fmt.Sprintf(
				"System messages hold %d characters; at most %d are allowed.", total, max))
		}
		return false, nil
	}
	budget := lim.systemBudget()
	if total <= budget {
		return false, nil
	}
	shortenSystem(msgs, budget)
	return true, nil
}

// shortenSystem keeps the first budget characters of the system and
// developer messages, in message order: the message that crosses the
// budget is cut at a character boundary and later ones are left empty.
// The beginning of a system prompt usually states who the assistant is
// and the rules that matter most, so the tail is what goes.
func shortenSystem(msgs []Message, budget int) {
	left := budget
	for i := range msgs {
		if !msgs[i].IsSystem() {
			continue
		}
		text := msgs[i].Text()
		n := utf8.RuneCountInString(text)
		if n > left {
			text = clip.Runes(text, left)
			n = left
		}
		left -= n
		msgs[i].Parts = []Part{{Kind: PartText, Text: text}}
	}
}
