package pdf

import (
	"strings"
	"testing"
)

// A narrow text column beside wide ones keeps its longest word whole:
// the wide columns give up room first.
func TestColumnsKeepTheirLongestWord(t *testing.T) {
	long := strings.Repeat("a long explanation of the quarter that wraps over many lines ", 12)
	md := "| Country | Notes | Comment | Growth |\n|---|---|---|---|\n" +
		"| Switzerland (with the Liechtenstein customs territory) | " + long + " | " + long + " | 12.4 % |\n" +
		"| Deutschland | short | short | 3.1 % |\n"
	res := renderOK(t, Document{Markdown: md})
	text := strings.Join(pageTexts(t, res.PDF), "\n")
	for _, w := range []string{"Switzerland", "Liechtenstein", "Deutschland", "Growth", "Country"} {
		if !strings.Contains(text, w) {
			t.Errorf("%q was split across lines", w)
		}
	}
}

func TestKeepWords(t *testing.T) {
	out := keepWords([]float64{30, 200, 250}, []float64{60, 50, 50}, 480)
	if out[0] < 60-0.01 || sum(out) < 480-0.01 || sum(out) > 480+0.01 {
		t.Errorf("keepWords = %v", out)
	}
	if out[1]/out[2] < 0.79 || out[1]/out[2] > 0.81 {
		t.Errorf("the wide columns did not give up room in proportion: %v", out)
	}
}
