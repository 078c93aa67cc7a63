package pdf

import "testing"

// TestHyphenIsNotAnEnDash checks the width documents give "-": the Go
// fonts' own hyphen is as wide as their en dash, which made
// "year-on-year" read as "year–on–year".
func TestHyphenIsNotAnEnDash(t *testing.T) {
	m := loadMetrics()
	for _, fc := range []face{regular, bold, italic, boldItalic} {
		hy, en := m.width(fc, 10, "-"), m.width(fc, 10, "–")
		if hy >= en*0.8 {
			t.Errorf("face %d: hyphen %.2f pt wide, en dash %.2f pt", fc, hy, en)
		}
	}
}
