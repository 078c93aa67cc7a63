package docx

import (
	"strings"
	"testing"
)

func TestColumnWidthsKeepWordsWhole(t *testing.T) {
	texts := [][]string{
		{"Country", "Growth", "Revenue 2025", "Revenue 2026", "Comment"},
		{"Switzerland", "12.5%", "1,234,567", "1,345,678", "Strong quarter driven by the new distribution partner in Zurich and Geneva"},
		{"Liechtenstein", "-3.1%", "45,000", "43,600", "Flat"},
	}
	widths := columnWidths(texts, textWidth)
	total := 0
	for _, w := range widths {
		total += w
	}
	if total != textWidth {
		t.Fatalf("widths %v add up to %d, want the text width %d", widths, total, textWidth)
	}
	for j := range texts[0] {
		longest := 0.0
		for i, row := range texts {
			for _, w := range strings.Fields(row[j]) {
				scale := 1.0
				if i == 0 {
					scale = boldScale
				}
				longest = max(longest, runWidth(w)*scale)
			}
		}
		if float64(widths[j]-2*cellMargin)+1 < longest {
			t.Errorf("column %d (%q) is %d twips, narrower than its longest word (%.0f)", j, texts[0][j], widths[j], longest)
		}
	}
	// The long comment column takes the slack, the number columns only
	// what their numbers need.
	if widths[4] <= widths[2] || widths[2] > 2*int(runWidth("Revenue 2025")*boldScale) {
		t.Errorf("widths %v: want the comment column widest and number columns snug", widths)
	}
}

func TestColumnWidthsShareSlackWhenAllFit(t *testing.T) {
	widths := columnWidths([][]string{{"A", "Bee"}, {"1", "2"}}, 6000)
	if widths[0]+widths[1] != 6000 || widths[0] >= widths[1] {
		t.Fatalf("widths %v, want 6000 twips shared by need", widths)
	}
}

// TestFontsCoverEveryScript checks that the styles name a font for East
// Asian and complex-script text wherever they name fonts at all, so that
// Word does not set Chinese or Arabic in Calibri's fallback.
func TestFontsCoverEveryScript(t *testing.T) {
	for _, part := range []string{stylesXML, codeFonts} {
		n := strings.Count(part, "<w:rFonts ")
		if n == 0 {
			t.Fatal("no font declarations")
		}
		for _, attr := range []string{`w:eastAsia="` + eastAsiaFont + `"`, `w:cs="` + complexFont + `"`} {
			if got := strings.Count(part, attr); got != n {
				t.Errorf("%d of %d font declarations have %s", got, n, attr)
			}
		}
	}
}
