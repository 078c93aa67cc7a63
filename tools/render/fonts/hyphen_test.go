package fonts

import (
	"testing"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

func TestWithTextHyphen(t *testing.T) {
	for _, f := range []Face{GoRegular, GoBold, GoItalic, GoBoldItalic} {
		orig, _ := f.Font()
		patched, err := WithTextHyphen(f.TTF())
		if err != nil {
			t.Fatal(err)
		}
		fnt, err := sfnt.Parse(patched)
		if err != nil {
			t.Fatalf("%s: patched font does not parse: %v", f, err)
		}
		adv := func(fnt *sfnt.Font, r rune) fixed.Int26_6 {
			var buf sfnt.Buffer
			g, _ := fnt.GlyphIndex(&buf, r)
			a, _ := fnt.GlyphAdvance(&buf, g, 1000<<6, 0)
			return a
		}
		if adv(orig, '-') == adv(orig, '\u00AD') {
			t.Fatalf("%s: hyphen and soft hyphen already alike; the test proves nothing", f)
		}
		if adv(fnt, '-') != adv(orig, '\u00AD') {
			t.Errorf("%s: hyphen advance %v, want the soft hyphen's %v", f, adv(fnt, '-'), adv(orig, '\u00AD'))
		}
		var buf sfnt.Buffer
		g, _ := fnt.GlyphIndex(&buf, '-')
		segs, err := fnt.LoadGlyph(&buf, g, 1000<<6, nil)
		if err != nil || len(segs) == 0 {
			t.Errorf("%s: patched hyphen outline: %v (%d segments)", f, err, len(segs))
		}
		if a, b := adv(fnt, 'a'), adv(orig, 'a'); a != b {
			t.Errorf("%s: other glyphs changed", f)
		}
		if &f.TTF()[0] == &patched[0] {
			t.Errorf("%s: the shared font bytes were modified", f)
		}
	}
}
