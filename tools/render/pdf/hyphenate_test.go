package pdf

import (
	"strings"
	"testing"
)

// A word too wide for its line is cut between letters with a hyphen;
// CJK text, which has no hyphens, is cut without one.
func TestHyphenateToFit(t *testing.T) {
	m := loadMetrics()
	st := style{face: regular, size: 10}
	it := item{text: "Switzerland", st: st, w: m.width(regular, 10, "Switzerland")}
	head, tail := m.hyphenateToFit(it, it.w*0.6, true)
	if !strings.HasSuffix(head.text, "-") || head.w > it.w*0.6+0.01 {
		t.Errorf("head %q (%.1f pt of %.1f)", head.text, head.w, it.w*0.6)
	}
	if strings.TrimSuffix(head.text, "-")+tail.text != "Switzerland" {
		t.Errorf("head %q + tail %q lose letters", head.text, tail.text)
	}
	cjk := m.clean("東京都庁舎東京都庁舎", false)
	words := m.tokenize([]span{{cjk, st}})
	head, _ = m.hyphenateToFit(words[0], words[0].w/2, true)
	if strings.Contains(head.text, "-") {
		t.Errorf("CJK cut with a hyphen: %q", head.text)
	}
}
