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
