package pdf

import (
	"fmt"
	"strings"
	"testing"
)

// However many rows a table has, its last page never holds a single row.
func TestNoLoneLastRow(t *testing.T) {
	broke := false
	for n := 30; n <= 60; n++ {
		var md strings.Builder
		md.WriteString("| Region | Revenue |\n|---|---|\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&md, "| region%03d | %d |\n", i, i*100)
		}
		res := renderOK(t, Document{Markdown: md.String()})
		pages := pageTexts(t, res.PDF)
		if len(pages) < 2 {
			continue
		}
		broke = true
		last := pages[len(pages)-1]
		rows := strings.Count(last, "region")
		if rows == 1 {
			t.Errorf("%d rows: the last page holds one row", n)
		}
	}
	if !broke {
		t.Fatal("no table broke across pages; the test proves nothing")
	}
}

// A heading is never left at a page's foot with its table on the next.
func TestHeadingKeepsItsTable(t *testing.T) {
	for n := 20; n <= 60; n++ {
		var md strings.Builder
		md.WriteString(strings.Repeat("Filler line.\n\n", n) + "## The heading\n\n| Region | Note |\n|---|---|\n")
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(&md, "| region%d | a note long enough to wrap onto a second line in its narrow column, %d |\n", i, i)
		}
		pages := pageTexts(t, renderOK(t, Document{Markdown: md.String()}).PDF)
		for i, p := range pages {
			if strings.Contains(p, "The heading") && !strings.Contains(p, "region1") {
				t.Fatalf("with %d filler paragraphs the heading is alone at the foot of page %d", n, i+1)
			}
		}
	}
}
