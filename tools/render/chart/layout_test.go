package chart

import (
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// Shown category labels never overlap, whatever their number and length.
func TestCategoryLabelsDoNotOverlap(t *testing.T) {
	sty := textStyle(tickSize, false, lightTheme.muted)
	lh := sty.Height("Ag")
	const width = 520
	for _, n := range []int{1, 3, 8, 12, 40, 365, 1000} {
		for _, length := range []int{1, 8, 30, 120} {
			for _, thin := range []bool{false, true} {
				labels := make([]string, n)
				for i := range labels {
					labels[i] = strings.Repeat("W", length)
				}
				spacing := vg.Length(width) / vg.Length(n)
				a := layoutCategories(labels, sty, spacing, 100, width, thin)
				prev := -1
				for i, l := range a.labels {
					if l == "" {
						continue
					}
					if prev >= 0 {
						gap := spacing * vg.Length(i-prev)
						need := (sty.Width(l) + sty.Width(a.labels[prev])) / 2
						if a.rotated {
							need = lh / sin45
						}
						if gap < need {
							t.Errorf("n=%d length=%d thin=%v: labels %d and %d overlap (gap %v, need %v)", n, length, thin, prev, i, gap, need)
						}
					}
					prev = i
				}
				if prev < 0 {
					t.Errorf("n=%d length=%d: no label shown", n, length)
				}
				if a.rotated && a.band > 100+lh {
					t.Errorf("n=%d length=%d: rotated labels take %v, more than the cap", n, length, a.band)
				}
			}
		}
	}
}

func TestCategoryLabelsTurnOnlyWhenCrowded(t *testing.T) {
	sty := textStyle(tickSize, false, lightTheme.muted)
	tests := []struct {
		name    string
		labels  []string
		thin    bool
		rotated bool
		shown   int
	}{
		{"few short labels lie flat", []string{"Q1", "Q2", "Q3", "Q4"}, false, false, 4},
		{"one long label among short ones is shortened", []string{"A very long label indeed, longer than a slot", "B", "C", "D", "E", "F"}, false, false, 6},
		{"many bar labels turn", strings.Fields(strings.Repeat("Engineering ", 12)), false, true, 12},
		{"many line labels thin out", strings.Fields(strings.Repeat("2025-01-01 ", 100)), true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := layoutCategories(tt.labels, sty, 520/vg.Length(len(tt.labels)), 100, 520, tt.thin)
			if a.rotated != tt.rotated {
				t.Errorf("rotated = %v, want %v", a.rotated, tt.rotated)
			}
			shown := 0
			for _, l := range a.labels {
				if l != "" {
					shown++
				}
			}
			if tt.shown > 0 && shown != tt.shown {
				t.Errorf("%d labels shown, want %d", shown, tt.shown)
			}
			if tt.shown == 0 && (shown == 0 || shown == len(tt.labels)) {
				t.Errorf("%d of %d labels shown, want a thinned few", shown, len(tt.labels))
			}
		})
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Revenue\n(USD)", "Revenue (USD)"},
		{"  spaced\t\tout  ", "spaced out"},
		{"Zürich, Ελλάδα, Москва", "Zürich, Ελλάδα, Москва"},
		{"Launch 🚀 day", "Launch 🚀 day"}, // drawn by a fallback font
		{"e\u0301", "é"},                 // decomposed accents compose
		{"東京", "東京"},
		{"سلام", "\uFEE1\uFEFC\uFEB3"}, // shaped, in display order
		{"keycap 1\uFE0F\u20E3", "keycap 1"},
		{"a\u200db", "ab"},
	}
	for _, tt := range tests {
		if got := clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFit(t *testing.T) {
	sty := textStyle(10, false, lightTheme.text)
	long := "A label far too long for the room it is given"
	got := fit(long, sty, 80)
	if !strings.HasSuffix(got, "…") || sty.Width(got) > 80 {
		t.Errorf("fit = %q (width %v), want an ellipsis within 80", got, sty.Width(got))
	}
	if got := fit("Short", sty, 80); got != "Short" {
		t.Errorf("fit(Short) = %q", got)
	}
}

func TestPieMergesSmallSlicesIntoOther(t *testing.T) {
	s := Spec{Type: TypePie, Labels: strings.Fields("a b c d e f g h i j"),
		Series: []Series{{Values: []float64{1, 10, 2, 9, 3, 8, 4, 7, 5, 6}}}}
	got := pieSlices(&s, &lightTheme)
	var names []string
	total := 0.0
	for _, p := range got {
		names = append(names, p.label)
		total += p.value
	}
	// The seven largest keep their order; the three smallest join.
	want := "b d f g h i j Other (3)"
	if strings.Join(names, " ") != want {
		t.Errorf("slices %q, want %q", names, want)
	}
	if total != 55 {
		t.Errorf("slices add up to %v, want 55", total)
	}
	if got[len(got)-1].value != 6 || got[len(got)-1].color != lightTheme.other {
		t.Errorf("Other = %+v, want 1+2+3 in the Other colour", got[len(got)-1])
	}
}
