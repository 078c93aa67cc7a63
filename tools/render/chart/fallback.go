package chart

import (
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// chainHandler is gonum/plot's plain text handler with per-character
// font fallback: each run of characters the chart face lacks is measured
// and drawn in the first system fallback font that has them
// (tools/render/fonts), so that labels in CJK, Hebrew, Arabic and other
// scripts are drawn rather than shown as "?".
type chainHandler struct {
	text.Plain
}

var _ text.Handler = chainHandler{}

// textRun is a stretch of a line set in one font. fb is the system
// fallback it is set in, nil for the chart face.
type textRun struct {
	s    string
	face *font.Face
	fb   *fonts.Fallback
}

// shaped returns the run shaped, when its script needs it (Devanagari's
// conjuncts, Thai's stacked marks): gonum/plot draws by character.
func (r textRun) shaped() *fonts.Shaped {
	if r.fb == nil || !fonts.NeedsShaping(r.s) {
		return nil
	}
	sh, ok := fonts.Shape(r.fb, r.s, float64(r.face.Font.Size))
	if !ok {
		return nil
	}
	return sh
}

func (r textRun) width() vg.Length {
	if sh := r.shaped(); sh != nil {
		return vg.Length(sh.Advance)
	}
	return r.face.Width(r.s)
}

// draw draws the run with its baseline starting at at.
func (r textRun) draw(c vg.Canvas, at vg.Point) {
	sh := r.shaped()
	if sh == nil {
		c.FillString(*r.face, at, r.s)
		return
	}
	var p pathPen
	sh.Draw(float64(at.X), float64(at.Y), false, &p)
	c.Fill(p.path)
}

// pathPen collects a shaped run's outlines as a vg.Path.
type pathPen struct{ path vg.Path }

func pt(x, y float64) vg.Point { return vg.Point{X: vg.Length(x), Y: vg.Length(y)} }

func (p *pathPen) MoveTo(x, y float64)         { p.path.Move(pt(x, y)) }
func (p *pathPen) LineTo(x, y float64)         { p.path.Line(pt(x, y)) }
func (p *pathPen) QuadTo(cx, cy, x, y float64) { p.path.QuadTo(pt(cx, cy), pt(x, y)) }
func (p *pathPen) CubeTo(c1x, c1y, c2x, c2y, x, y float64) {
	p.path.CubeTo(pt(c1x, c1y), pt(c2x, c2y), pt(x, y))
}
func (p *pathPen) Close() { p.path.Close() }

// runs cuts txt into runs by the font that draws each character.
func runs(primary *font.Face, txt string) []textRun {
	var out []textRun
	var cur *font.Face
	var curFB *fonts.Fallback
	start := 0
	for i, r := range txt {
		f, fb := faceFor(primary, r)
		if cur != nil && fb != curFB {
			out = append(out, textRun{txt[start:i], cur, curFB})
			start = i
		}
		cur, curFB = f, fb
	}
	if cur != nil {
		out = append(out, textRun{txt[start:], cur, curFB})
	}
	return out
}

func faceFor(primary *font.Face, r rune) (*font.Face, *fonts.Fallback) {
	if r < 0x80 || hasGlyph(r) {
		return primary, nil
	}
	for _, fb := range fonts.Fallbacks() {
		if fb.Has(r) {
			return fallbackFace(fb, primary.Font.Size), fb
		}
	}
	return primary, nil
}

// fallbackFace returns fb as a gonum/plot face at size.
func fallbackFace(fb *fonts.Fallback, size vg.Length) *font.Face {
	return &font.Face{Font: font.Font{Typeface: font.Typeface(fb.Name), Size: size}, Face: fb.Font()}
}

func (h chainHandler) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	face := h.Fonts.Lookup(fnt, fnt.Size)
	ext := face.Extents()
	for _, r := range runs(&face, txt) {
		width += r.width()
	}
	return width, ext.Ascent, ext.Descent
}

// Draw is text.Plain's Draw, drawing run by run.
func (h chainHandler) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if len(txt) == 0 {
		return
	}
	fnt := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	ht := sty.Height(txt)
	pt.Y += ht*vg.Length(sty.YAlign) - fnt.Extents().Ascent
	for i, line := range lines {
		rs := runs(&fnt, line)
		var w vg.Length
		for _, r := range rs {
			w += r.width()
		}
		n := vg.Length(len(lines) - i)
		at := pt.Add(vg.Point{X: vg.Length(sty.XAlign) * w, Y: n * sty.Font.Size})
		for _, r := range rs {
			r.draw(c, at)
			at.X += r.width()
		}
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}

// fallbackHas reports whether a system fallback font draws r.
func fallbackHas(r rune) bool {
	for _, fb := range fonts.Fallbacks() {
		if fb.Has(r) {
			return true
		}
	}
	return false
}
