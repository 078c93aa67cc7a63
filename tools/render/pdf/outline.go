package pdf

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// fpdf sets text through the font's character map, one glyph per
// character, and only for the Basic Multilingual Plane. A run whose
// glyphs a shaper chooses (a Devanagari conjunct, a Thai mark stacked
// over a vowel, a vowel sign drawn before its consonant) or whose
// characters lie beyond the plane (emoji) cannot be written that way:
// such a run is shaped (fonts.Shape), its glyphs are filled as outlines,
// and its text is written invisibly over them at the same place and
// width, as scanned documents carry their recognised text, so that
// search, selection and text extraction still find the characters typed.

// shapeInfo is what layout needs to know about a run in a fallback font.
type shapeInfo struct {
	outline bool    // drawn as outlines
	adv     float64 // shaped advance, thousandths of the size
	glyphs  []shapedGlyph
}

// shapedGlyph is a glyph of a shaped run, its origin from the run's
// start in thousandths of the size, y up.
type shapedGlyph struct {
	id   uint32
	x, y float64
}

// maxShapeCache bounds the per-font cache of shaped runs; a document
// repeats its words, and a flood of distinct ones only costs re-shaping.
const maxShapeCache = 4096

// shapeUnit is the size runs are shaped at for measuring: thousandths,
// the unit of the character widths.
const shapeUnit = 1000

// maxShapeKey is the longest run (in bytes) kept in the cache. Longer
// runs are words too wide for a line (a Thai or CJK paragraph with no
// spaces), measured once whole and then cut into lines.
const maxShapeKey = 1024

// shapeInfo returns whether s, set in this font, must be drawn as
// outlines, and its shaped advance.
func (f *fallbackFont) shapeInfo(s string) shapeInfo {
	if len(s) > maxShapeKey {
		return f.computeShapeInfo(s)
	}
	f.mu.Lock()
	if si, ok := f.shaped[s]; ok {
		f.mu.Unlock()
		return si
	}
	f.mu.Unlock()
	si := f.computeShapeInfo(s)
	f.mu.Lock()
	if f.shaped == nil || len(f.shaped) >= maxShapeCache {
		f.shaped = map[string]shapeInfo{}
	}
	f.shaped[s] = si
	f.mu.Unlock()
	return si
}

func (f *fallbackFont) computeShapeInfo(s string) shapeInfo {
	astral := hasAstral(s)
	if !astral && !fonts.NeedsShaping(s) && (isPlain(s) || fonts.HasRTL(s)) {
		// Right-to-left text is shaped through presentation forms and
		// set as text; plain ASCII has nothing for a shaper to change.
		return shapeInfo{}
	}
	if len(s) > maxShapeKey && !astral && !fonts.NeedsShaping(s) {
		// Too long to be compared glyph by glyph on every cut; the
		// lines it is cut into are, when they are drawn.
		return shapeInfo{}
	}
	sh, ok := fonts.Shape(f.src, s, shapeUnit)
	if !ok {
		return shapeInfo{}
	}
	si := shapeInfo{adv: sh.Advance}
	switch {
	case astral, fonts.NeedsShaping(s):
		si.outline = true
	default:
		si.outline = !f.oneToOne(s, sh)
	}
	if si.outline {
		si.glyphs = make([]shapedGlyph, sh.Glyphs())
		for i := range si.glyphs {
			g := &si.glyphs[i]
			g.id, g.x, g.y = sh.Glyph(i)
		}
	}
	return si
}

// oneToOne reports whether the shaper set s as the character map does:
// one glyph per character, each the character's own, with no mark moved
// off the point where the glyph before it ends. A ligature, a contextual
// form or a mark placed by the font's positioning tables is something
// text drawn by fpdf would lose; kerning between spacing glyphs is not
// worth outlining a run for, and is let pass.
func (f *fallbackFont) oneToOne(s string, sh *fonts.Shaped) bool {
	fnt := f.src.Font()
	if fnt == nil || sh.Glyphs() != utf8.RuneCountInString(s) {
		return false
	}
	var buf sfnt.Buffer
	end := 0.0 // where the glyph before ends, by the character map
	i := 0
	for _, r := range s {
		id, x, y := sh.Glyph(i)
		g, err := fnt.GlyphIndex(&buf, r)
		if err != nil || uint32(g) != id || y != 0 {
			return false
		}
		w := float64(f.width(r))
		if w <= 1 && abs(x-end) > 0.5 {
			return false // a mark the font placed
		}
		end = x + w
		i++
	}
	return true
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func hasAstral(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 {
			return true
		}
	}
	return false
}

// inks reports whether r's glyph in this font has an outline to fill. A
// font may map an emoji to an empty glyph and keep its picture in a
// colour bitmap (CBDT) or colour layers, which are not drawn here.
func (f *fallbackFont) inks(r rune) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.inked[r]; ok {
		return v
	}
	ok := false
	if fnt := f.src.Font(); fnt != nil {
		var buf sfnt.Buffer
		if g, err := fnt.GlyphIndex(&buf, r); err == nil && g != 0 {
			segs, err := fnt.LoadGlyph(&buf, g, fixed.I(int(fnt.UnitsPerEm())), nil)
			ok = err == nil && len(segs) > 0
		}
	}
	if f.inked == nil || len(f.inked) >= maxShapeCache {
		f.inked = map[rune]bool{}
	}
	f.inked[r] = ok
	return ok
}

// outlined reports whether s set in st is drawn as outlines.
func (m *metrics) outlined(st style, s string) bool {
	if st.fb == 0 || s == "" || isPlain(s) {
		return false
	}
	return pdfFallbacks()[st.fb-1].shapeInfo(s).outline
}

// shapedWidth returns the width of s in fallback st.fb and whether it is
// drawn as outlines; when it is not, the width is not computed.
func (m *metrics) shapedWidth(st style, s string) (float64, bool) {
	if st.fb == 0 || s == "" || isPlain(s) {
		return 0, false
	}
	si := pdfFallbacks()[st.fb-1].shapeInfo(s)
	if !si.outline {
		return 0, false
	}
	return si.adv * st.size / shapeUnit, true
}

// shapedRun records a run drawn as outlines, for tests.
type shapedRun struct {
	text     string
	fb       uint8
	x, y     float64 // start of the baseline on the page, y down
	w        float64 // the width layout gave the run
	glyphs   int     // glyphs the shaper returned
	contours int     // closed outlines filled
	advance  float64 // the shaped run's advance
	textW    float64 // the invisible text's width before scaling
}

// drawOutlined draws f's text shaped, as filled glyph outlines with the
// text invisibly on top, its baseline starting at (x, baseline). It
// reports false when the font cannot be shaped; the caller then sets
// the text as usual.
func (r *renderer) drawOutlined(f frag, x, baseline float64) bool {
	fb := pdfFallbacks()[f.st.fb-1]
	si := fb.shapeInfo(f.text)
	fnt := fb.src.Font()
	if !si.outline || fnt == nil {
		return false
	}
	size := f.st.size / shapeUnit // the run was shaped at shapeUnit
	r.setStyleFont(f.st)
	r.setColor(f.st.color)
	r.setFill(f.st.color)
	// Each glyph's path is kept in font units and placed by a matrix, so
	// that a glyph is converted and formatted once per font and process,
	// however often it is drawn.
	k := r.pdf.GetConversionRatio()
	scale := f.st.size / float64(fnt.UnitsPerEm()) * k
	var b []byte
	contours := 0
	for _, sg := range si.glyphs {
		gx, gy := sg.x*size, sg.y*size
		g := fb.glyphPath(fnt, sg.id)
		if g.path == "" {
			continue
		}
		contours += g.contours
		b = append(b, "q "...)
		b = appendNum(b, scale, 8)
		b = append(b, " 0 0 "...)
		b = appendNum(b, scale, 8)
		b = append(b, ' ')
		b = appendNum(b, (x+gx)*k, 3)
		b = append(b, ' ')
		b = appendNum(b, (r.pageH-baseline+gy)*k, 3)
		b = append(b, " cm\n"...)
		b = append(b, g.path...)
		b = append(b, "f Q\n"...)
	}
	r.pdf.RawWriteStr(string(b))
	adv := si.adv * size
	textW := r.invisibleText(f.text, fb, x, baseline, adv)
	if r.shapedRuns != nil {
		*r.shapedRuns = append(*r.shapedRuns, shapedRun{
			text: f.text, fb: f.st.fb, x: x, y: baseline, w: f.w,
			glyphs: len(si.glyphs), contours: contours, advance: adv, textW: textW,
		})
	}
	return true
}

// glyphOutline is a glyph's outline as PDF path operators, in font units
// with y up.
type glyphOutline struct {
	path     string
	contours int
}

// glyphPath returns glyph id's outline, from the cache or converted.
func (f *fallbackFont) glyphPath(fnt *sfnt.Font, id uint32) glyphOutline {
	f.mu.Lock()
	g, ok := f.paths[id]
	f.mu.Unlock()
	if ok {
		return g
	}
	var buf sfnt.Buffer
	upem := fnt.UnitsPerEm()
	// At a size of one unit per em the segments come in font units (in
	// 26.6 fixed point), with y down.
	segs, err := fnt.LoadGlyph(&buf, sfnt.GlyphIndex(id), fixed.I(int(upem)), nil)
	if err == nil {
		g = outlinePath(segs)
	}
	f.mu.Lock()
	if f.paths == nil || len(f.paths) >= maxShapeCache {
		f.paths = map[uint32]glyphOutline{}
	}
	f.paths[id] = g
	f.mu.Unlock()
	return g
}

// outlinePath writes segments as a path: each contour closed, quadratic
// curves raised to the cubics they equal (PDF has no quadratic curve).
func outlinePath(segs sfnt.Segments) glyphOutline {
	var (
		b      []byte
		g      glyphOutline
		cx, cy float64 // the current point
		open   bool
	)
	pt := func(p fixed.Point26_6) (float64, float64) { return float64(p.X) / 64, -float64(p.Y) / 64 }
	xy := func(x, y float64) {
		b = appendNum(b, x, 1)
		b = append(b, ' ')
		b = appendNum(b, y, 1)
		b = append(b, ' ')
	}
	for _, s := range segs {
		switch s.Op {
		case sfnt.SegmentOpMoveTo:
			if open {
				b = append(b, "h\n"...)
				g.contours++
			}
			cx, cy = pt(s.Args[0])
			xy(cx, cy)
			b = append(b, "m\n"...)
			open = true
		case sfnt.SegmentOpLineTo:
			cx, cy = pt(s.Args[0])
			xy(cx, cy)
			b = append(b, "l\n"...)
		case sfnt.SegmentOpQuadTo:
			qx, qy := pt(s.Args[0])
			x, y := pt(s.Args[1])
			xy(cx+2.0/3*(qx-cx), cy+2.0/3*(qy-cy))
			xy(x+2.0/3*(qx-x), y+2.0/3*(qy-y))
			xy(x, y)
			b = append(b, "c\n"...)
			cx, cy = x, y
		case sfnt.SegmentOpCubeTo:
			x1, y1 := pt(s.Args[0])
			x2, y2 := pt(s.Args[1])
			x, y := pt(s.Args[2])
			xy(x1, y1)
			xy(x2, y2)
			xy(x, y)
			b = append(b, "c\n"...)
			cx, cy = x, y
		}
	}
	if open {
		b = append(b, "h\n"...)
		g.contours++
	}
	g.path = string(b)
	return g
}

// appendNum writes v with at most prec decimals and no trailing zeros.
// Glyph paths are in font units, where a tenth of a unit is far below
// what any output resolves; positions on the page get a thousandth of a
// point, and the glyph scale (the size over some 2000 units per em) eight
// decimals, six significant digits.
func appendNum(b []byte, v float64, prec int) []byte {
	p := math.Pow10(prec)
	v = math.Round(v*p) / p
	if v == 0 {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// invisibleText writes s with text render mode 3 (neither filled nor
// stroked) over a shaped run, scaled horizontally (Tz) to the run's
// width w so that a selection covers the glyphs. Characters fpdf cannot
// write (beyond the Basic Multilingual Plane, or missing from the font)
// are written as a stand-in. The text is inside a marked-content span
// whose ActualText holds the run's characters, which extraction (poppler,
// Acrobat) reports as one piece: otherwise a vowel sign of no width at
// the run's end stands where the next run starts, and poppler may put
// the punctuation after the run before it ("बिंद:ु"). It returns the
// text's own width.
func (r *renderer) invisibleText(s string, fb *fallbackFont, x, baseline, w float64) float64 {
	written := writable(s, fb)
	if written == "" {
		return 0
	}
	tw := r.pdf.GetStringWidth(written)
	scale := 100.0
	if tw > 0 && w > 0 {
		scale = 100 * w / tw
	}
	var b strings.Builder
	b.WriteString("/Span <</ActualText <")
	b.WriteString(utf16Hex(s))
	b.WriteString(">>> BDC q 3 Tr ")
	b.WriteString(strconv.FormatFloat(scale, 'f', 2, 64))
	b.WriteString(" Tz\n")
	r.pdf.RawWriteStr(b.String())
	r.pdf.Text(x, baseline, written)
	r.pdf.RawWriteStr("Q EMC\n")
	return tw
}

// writable returns s with every character fpdf cannot write in fb
// replaced by a stand-in the font has.
func writable(s string, fb *fallbackFont) string {
	exact := true
	for _, c := range s {
		if c >= 0x10000 || fb.width(c) == 0 {
			exact = false
			break
		}
	}
	if exact {
		return s
	}
	stand := ' '
	for _, c := range []rune{replacement, '?', '.'} {
		if fb.width(c) > 0 {
			stand = c
			break
		}
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == zwj || c == zwnj:
			continue // no width and nothing to copy
		case c >= 0x10000 || fb.width(c) == 0:
			c = stand
		}
		b.WriteRune(c)
	}
	return b.String()
}

// utf16Hex is s as a PDF text string: UTF-16BE with its byte order mark,
// in hexadecimal.
func utf16Hex(s string) string {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2, 2+2*len(u))
	b[0], b[1] = 0xFE, 0xFF
	for _, v := range u {
		b = append(b, byte(v>>8), byte(v))
	}
	return strings.ToUpper(hex.EncodeToString(b))
}

// bmpOnly drops what fpdf cannot encode (it would write garbage codes):
// characters beyond the Basic Multilingual Plane, which reach it only
// when their outline font does not parse.
func bmpOnly(s string) string {
	if !hasAstral(s) {
		return s
	}
	return strings.Map(func(c rune) rune {
		if c >= 0x10000 {
			return -1
		}
		return c
	}, s)
}
