package fonts

import (
	"testing"
)

// fallbackFor returns the first fallback that draws r, failing the test
// with what to install when none does.
func fallbackFor(t *testing.T, r rune) *Fallback {
	t.Helper()
	for _, fb := range Fallbacks() {
		if fb.Has(r) {
			return fb
		}
	}
	t.Fatalf("no font draws %q; install Debian's fonts-noto-core (scripts/fonts.sh does, as root) or set %s", r, DirEnv)
	return nil
}

func TestShapeFormsDevanagariConjuncts(t *testing.T) {
	fb := fallbackFor(t, 'क')
	face := fb.shapingFace()
	if face == nil {
		t.Fatalf("%s does not parse for shaping", fb.Path)
	}
	da, _ := face.NominalGlyph('द')
	fb.faces.Put(face)

	// क्ष is one glyph, the conjunct, where drawing by character shows
	// three: ka, virama, ssa.
	s, ok := Shape(fb, "क्ष", 12)
	if !ok {
		t.Fatal("Shape failed")
	}
	if s.Glyphs() != 1 {
		t.Errorf("क्ष shaped into %d glyphs, want the one conjunct", s.Glyphs())
	}
	// The short i of दि is written after its consonant and drawn before
	// it (in one of the font's widths for it, so not compared by id).
	s, _ = Shape(fb, "दिल्ली", 12)
	if len(s.glyphs) < 2 || s.glyphs[0].id == da || s.glyphs[1].id != da {
		t.Errorf("दिल्ली shaped as %v, want the i sign before da (%v)", s.glyphs, da)
	}
	if s.Advance <= 0 || s.Advance > 12*6 {
		t.Errorf("advance %v for six letters at 12", s.Advance)
	}
}

func TestShapeDrawsOutlines(t *testing.T) {
	fb := fallbackFor(t, 'ก')
	s, ok := Shape(fb, "กรุงเทพ", 20)
	if !ok {
		t.Fatal("Shape failed")
	}
	var pen countingPen
	s.Draw(0, 20, true, &pen)
	if pen.moves < s.Glyphs() || pen.maxX <= 0 || pen.maxX > s.Advance+20 {
		t.Errorf("outline of %d glyphs: %d contours, right edge %v, advance %v", s.Glyphs(), pen.moves, pen.maxX, s.Advance)
	}
}

func TestNeedsShaping(t *testing.T) {
	for s, want := range map[string]bool{"नमस्ते": true, "สวัสดี": true, "ខ្មែរ": true, "বাংলা": true, "abc": false, "東京": false, "مرحبا": false} {
		if got := NeedsShaping(s); got != want {
			t.Errorf("NeedsShaping(%q) = %v", s, got)
		}
	}
}

type countingPen struct {
	moves int
	maxX  float64
}

func (p *countingPen) MoveTo(x, y float64)                     { p.moves++; p.maxX = max(p.maxX, x) }
func (p *countingPen) LineTo(x, y float64)                     { p.maxX = max(p.maxX, x) }
func (p *countingPen) QuadTo(cx, cy, x, y float64)             { p.maxX = max(p.maxX, x) }
func (p *countingPen) CubeTo(c1x, c1y, c2x, c2y, x, y float64) { p.maxX = max(p.maxX, x) }
func (p *countingPen) Close()                                  {}
