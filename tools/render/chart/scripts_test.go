package chart

import (
	"context"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestLabelsInEveryScript checks that labels in scripts the chart face
// lacks reach the picture through the fallback fonts instead of as "?".
func TestLabelsInEveryScript(t *testing.T) {
	labels := []string{"東京", "서울", "שלום", "القاهرة", "दिल्ली", "กรุงเทพ", "Hà Nội"}
	for _, l := range labels {
		if got := clean(l); strings.Contains(got, "?") || got == "" {
			t.Errorf("clean(%q) = %q", l, got)
		}
	}
	out, err := Render(context.Background(), "売上 — מכירות — المبيعات", Spec{
		Type: "bar", Labels: labels, YLabel: "売上 (¥)",
		Series: []Series{{Name: "2025", Values: []float64{5, 4, 3, 6, 2, 7, 4}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES"); dir != "" {
		if err := os.WriteFile(dir+"/chart-scripts.png", out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDevanagariIsShaped checks that a conjunct is measured (and so
// drawn) as the one glyph the font has for it, not as its letters side
// by side: ka, virama and ssa make क्ष.
func TestDevanagariIsShaped(t *testing.T) {
	sty := textStyle(20, false, nil)
	var letters vg.Length
	for _, r := range "क्ष" {
		letters += sty.Width(string(r))
	}
	if got := sty.Width("क्ष"); got <= 0 || got > letters*0.8 {
		t.Errorf("क्ष is %v wide, its letters apart %v: not shaped", got, letters)
	}
}
