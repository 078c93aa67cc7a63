package docx

import (
	"strings"
	"testing"
)

// Hebrew and Arabic paragraphs, list items and table cells read from
// the right: w:bidi, and their runs marked w:rtl. They are set flush
// right by leaving w:jc out: in a bidi paragraph Word and LibreOffice
// read "right" as the end, the left margin (LibreOffice puts a bidi
// paragraph with jc "right" at the left). English beside them is left
// as it is.
func TestRightToLeftParagraphs(t *testing.T) {
	_, parts := renderParts(t, Document{Markdown: "שלום רב, **תודה**.\n\n- كراسي مكتبية: 12\n\nReference: order 4821, שלום.\n\n| פריט | Qty |\n|---|---|\n| כיסא | 12 |\n"})
	doc := parseDocument(t, parts["word/document.xml"])
	seen := 0
	for _, p := range doc.paras {
		rtl := strings.HasPrefix(p.text, "ש") || strings.HasPrefix(p.text, "ك") || p.text == "פריט" || p.text == "כיסא"
		if !rtl {
			if p.bidi || p.jc == "right" && !p.inTable {
				t.Errorf("%q: bidi %v, jc %q; a left-to-right paragraph", p.text, p.bidi, p.jc)
			}
			continue
		}
		seen++
		if !p.bidi || p.jc != "" || p.rtlRuns == 0 {
			t.Errorf("%q: bidi %v, jc %q, %d runs marked rtl; want bidi, no jc, rtl runs", p.text, p.bidi, p.jc, p.rtlRuns)
		}
	}
	if seen != 4 {
		t.Errorf("%d right-to-left paragraphs found, want 4: %+v", seen, doc.paras)
	}
}
