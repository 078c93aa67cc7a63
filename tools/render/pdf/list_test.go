package pdf

import (
	"fmt"
	"strings"
	"testing"
)

// Every list item keeps its marker, the ones that open a page too.
func TestListMarkersAcrossPages(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		var md strings.Builder
		const n = 120
		for i := 1; i <= n; i++ {
			if ordered {
				fmt.Fprintf(&md, "%d. item %d\n", i, i)
			} else {
				fmt.Fprintf(&md, "- item %d\n", i)
			}
		}
		res := renderOK(t, Document{Markdown: md.String()})
		pages := pageTexts(t, res.PDF)
		if len(pages) < 2 {
			t.Fatalf("%d page(s); the test needs a page break", len(pages))
		}
		text := strings.Join(pages, "\n")
		for i := 1; i <= n; i++ {
			marker := "•"
			if ordered {
				marker = fmt.Sprintf("%d.", i)
			}
			if !strings.Contains(flat(text), marker+" item "+fmt.Sprint(i)+" ") && !strings.HasSuffix(flat(text), marker+" item "+fmt.Sprint(i)) {
				t.Errorf("ordered %v: item %d has no marker", ordered, i)
			}
		}
	}
}

// A list's last item never stands alone at the head of a page: the item
// before it goes along.
func TestNoLoneLastListItem(t *testing.T) {
	broke := false
	for n := 20; n <= 60; n++ {
		md := strings.Repeat("Filler line.\n\n", n) + "- item one\n- item two\n- item three\n- item last\n"
		pages := pageTexts(t, renderOK(t, Document{Markdown: md}).PDF)
		if len(pages) < 2 {
			continue
		}
		last := flat(pages[len(pages)-1])
		if strings.Contains(last, "item last") && strings.Contains(flat(strings.Join(pages[:len(pages)-1], " ")), "item one") {
			broke = true
			if !strings.Contains(last, "item three") {
				t.Errorf("with %d filler paragraphs the last item is alone on page %d", n, len(pages))
			}
		}
	}
	if !broke {
		t.Fatal("no list broke across pages; the test proves nothing")
	}
}
