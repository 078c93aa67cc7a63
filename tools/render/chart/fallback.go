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

// textRun is a stretch of a line set in one font.
type textRun struct {
	s    string
	face *font.Face
}

// runs cuts txt into runs by the font that draws each character.
func runs(primary *font.Face, txt string) []textRun {
	var out []textRun
	var cur *font.Face
	start := 0
	for i, r := range txt {
		f := faceFor(primary, r)
		if cur != nil && f != cur {
			out = append(out, textRun{txt[start:i], cur})
			start = i
		}
		cur = f
	}
	if cur != nil {
		out = append(out, textRun{txt[start:], cur})
	}
	return out
}

func faceFor(primary *font.Face, r rune) *font.Face {
	if r < 0x80 || hasGlyph(r) {
		return primary
	}
	for _, fb := range fonts.Fallbacks() {
		if fb.Has(r) {
			return fallbackFace(fb, primary.Font.Size)
		}
	}
	return primary
}

// fallbackFace returns fb as a gonum/plot face at size.
func fallbackFace(fb *fonts.Fallback, size vg.Length) *font.Face {
	return &font.Face{Font: font.Font{Typeface: font.Typeface(fb.Name), Size: size}, Face: fb.Font()}
}

func (h chainHandler) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	face := h.Fonts.Lookup(fnt, fnt.Size)
	ext := face.Extents()
	for _, r := range runs(&face, txt) {
		width += r.face.Width(r.s)
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
			w += r.face.Width(r.s)
		}
		n := vg.Length(len(lines) - i)
		at := pt.Add(vg.Point{X: vg.Length(sty.XAlign) * w, Y: n * sty.Font.Size})
		for _, r := range rs {
			c.FillString(*r.face, at, r.s)
			at.X += r.face.Width(r.s)
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
