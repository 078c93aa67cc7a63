package diagram

import (
	"github.com/switchyardhq/switchyard/tools/render/fonts"
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"
	"unicode"

	"git.sr.ht/~sbinet/gg"
	"golang.org/x/image/font/sfnt"
)

// painter draws xdot operations onto a canvas. Graphviz coordinates are
// points with y up; the canvas has scale pixels per point, y down, and a
// margin around the drawing.
type painter struct {
	dc      *gg.Context
	scale   float64
	offX    float64 // canvas x of Graphviz x = 0, in pixels
	offY    float64 // canvas y of Graphviz y = 0, in pixels
	faces   faceCache
	halo    color.NRGBA // behind edge labels
	glyphs  map[rune]bool
	sfntBuf sfnt.Buffer
}

// state is the drawing state within one operation list. Graphviz writes
// each object's operations as a separate list that starts from defaults.
type state struct {
	pen, fill  fillStyle
	lineWidth  float64 // points
	dash       []float64
	invisible  bool
	fontSize   float64
	fontFace   string
	fontChar   int
	labelLayer bool // text gets a halo in the background colour
}

// fillStyle is a flat colour or a gradient.
type fillStyle struct {
	c    color.NRGBA
	grad gg.Pattern // nil for a flat colour
}

func (f fillStyle) visible() bool { return f.grad != nil || f.c.A > 0 }

func newState() state {
	black := fillStyle{c: color.NRGBA{A: 0xFF}}
	return state{pen: black, fill: black, lineWidth: 1, fontSize: 14, fontFace: "Times-Roman"}
}

func (p *painter) x(v float64) float64 { return p.offX + v*p.scale }
func (p *painter) y(v float64) float64 { return p.offY - v*p.scale }

// run draws one operation list.
func (p *painter) run(ops []op, labelLayer bool) {
	st := newState()
	st.labelLayer = labelLayer
	for i := range ops {
		o := &ops[i]
		switch o.Op {
		case "c":
			st.pen = p.style(o)
		case "C":
			st.fill = p.style(o)
		case "S":
			p.setStyle(&st, o.Style)
		case "F":
			st.fontSize, st.fontFace = o.Size, o.Face
		case "t":
			st.fontChar = o.FontChar
		case "T":
			if !st.invisible {
				p.text(&st, o)
			}
		case "E", "e":
			if st.invisible || len(o.Rect) != 4 {
				continue
			}
			p.dc.NewSubPath()
			p.dc.DrawEllipse(p.x(o.Rect[0]), p.y(o.Rect[1]), math.Abs(o.Rect[2])*p.scale, math.Abs(o.Rect[3])*p.scale)
			p.paint(&st, o.Op == "E", true)
		case "P", "p", "L":
			if st.invisible || len(o.Points) < 2 {
				continue
			}
			p.dc.NewSubPath()
			for j, pt := range o.Points {
				if j == 0 {
					p.dc.MoveTo(p.x(pt[0]), p.y(pt[1]))
				} else {
					p.dc.LineTo(p.x(pt[0]), p.y(pt[1]))
				}
			}
			closed := o.Op != "L"
			if closed {
				p.dc.ClosePath()
			}
			p.paint(&st, o.Op == "P", closed)
		case "B", "b":
			if st.invisible || len(o.Points) < 4 {
				continue
			}
			pts := o.Points
			p.dc.NewSubPath()
			p.dc.MoveTo(p.x(pts[0][0]), p.y(pts[0][1]))
			for j := 1; j+2 < len(pts); j += 3 {
				p.dc.CubicTo(p.x(pts[j][0]), p.y(pts[j][1]), p.x(pts[j+1][0]), p.y(pts[j+1][1]), p.x(pts[j+2][0]), p.y(pts[j+2][1]))
			}
			// Graphviz's json writer swaps the case of the Bézier
			// operations relative to xdot text: there "b" is filled,
			// here "B" is (checked against Graphviz 2.43 and 12.1).
			filled := o.Op == "B"
			p.paint(&st, filled, filled)
		}
	}
}

// paint fills and strokes the current path.
func (p *painter) paint(st *state, filled, closed bool) {
	if filled && st.fill.visible() {
		p.apply(st.fill)
		p.dc.FillPreserve()
	}
	if st.pen.visible() && st.lineWidth > 0 {
		p.apply(st.pen)
		p.dc.SetLineWidth(st.lineWidth * p.scale)
		if len(st.dash) > 0 {
			d := make([]float64, len(st.dash))
			for i, v := range st.dash {
				d[i] = v * p.scale
			}
			p.dc.SetDash(d...)
		} else {
			p.dc.SetDash()
		}
		if closed {
			p.dc.SetLineJoin(gg.LineJoinRound)
		}
		p.dc.StrokePreserve()
	}
	p.dc.ClearPath()
}

func (p *painter) apply(f fillStyle) {
	if f.grad != nil {
		p.dc.SetFillStyle(f.grad)
		p.dc.SetStrokeStyle(f.grad)
		return
	}
	p.dc.SetColor(f.c)
}

// style reads a colour operation, flat or gradient.
func (p *painter) style(o *op) fillStyle {
	switch o.Grad {
	case "linear", "radial":
		if len(o.Stops) == 0 || len(o.P0) < 2 || len(o.P1) < 2 {
			break
		}
		var g gg.Gradient
		if o.Grad == "linear" {
			g = gg.NewLinearGradient(p.x(o.P0[0]), p.y(o.P0[1]), p.x(o.P1[0]), p.y(o.P1[1]))
		} else {
			if len(o.P0) < 3 || len(o.P1) < 3 {
				break
			}
			g = gg.NewRadialGradient(p.x(o.P0[0]), p.y(o.P0[1]), o.P0[2]*p.scale, p.x(o.P1[0]), p.y(o.P1[1]), o.P1[2]*p.scale)
		}
		for _, s := range o.Stops {
			g.AddColorStop(s.Frac, parseColor(s.Color))
		}
		return fillStyle{grad: g}
	}
	if len(o.Stops) > 0 && o.Color == "" {
		return fillStyle{c: parseColor(o.Stops[0].Color)}
	}
	return fillStyle{c: parseColor(o.Color)}
}

// setStyle applies an xdot pen style.
func (p *painter) setStyle(st *state, s string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "solid":
		st.dash = nil
	case s == "dashed":
		st.dash = []float64{5, 3}
	case s == "dotted":
		st.dash = []float64{1.2, 2.4}
	case s == "invis" || s == "invisible":
		st.invisible = true
	case s == "bold":
		st.lineWidth = 2
	case strings.HasPrefix(s, "setlinewidth(") && strings.HasSuffix(s, ")"):
		w, err := strconv.ParseFloat(s[len("setlinewidth("):len(s)-1], 64)
		if err == nil && w >= 0 && w <= 100 {
			st.lineWidth = w
		}
	}
}

// text draws one "T" operation. Graphviz placed the text by its width
// estimate; text that comes out wider in the Go font is set smaller so it
// stays inside its box.
func (p *painter) text(st *state, o *op) {
	s := p.printable(o.Text)
	if strings.TrimSpace(s) == "" || st.fontSize <= 0 || !st.pen.visible() {
		return
	}
	kind := kindFor(st.fontFace, st.fontChar)
	if kind != fontMono && kind != fontMonoBold {
		// Go's hyphen is as wide as an en dash; its soft hyphen has the
		// shape and width of a Helvetica hyphen.
		s = strings.ReplaceAll(s, "-", "\u00ad")
	}
	px := st.fontSize * p.scale
	if px < 1 {
		return
	}
	face, err := p.faces.face(kind, min(px, 2000))
	if err != nil {
		return
	}
	ps := p.pieces(s, px)
	w := measure(face, ps)
	if want := o.Width * p.scale; want > 0 && w > want*1.02 {
		px *= want / w
		if face, err = p.faces.face(kind, px); err != nil {
			return
		}
		ps = p.pieces(s, px)
		w = measure(face, ps)
	}
	x, y := p.x(o.Pt[0]), p.y(o.Pt[1])
	switch o.Align {
	case "c":
		x -= w / 2
	case "r":
		x -= w
	}
	m := face.Metrics()
	ascent, descent := float64(m.Ascent)/64, float64(m.Descent)/64
	if st.labelLayer {
		pad := px * 0.12
		rx, ry, rw, rh := x-pad, y-ascent-pad*0.5, w+2*pad, ascent+descent+pad
		p.dc.SetColor(p.haloUnder(rx, ry, rw, rh))
		p.dc.DrawRoundedRectangle(rx, ry, rw, rh, pad)
		p.dc.Fill()
	}
	// gg would resample every glyph through a bilinear transform; the
	// canvas has no transform, so glyph masks are composited directly.
	if img, ok := p.dc.Image().(*image.RGBA); ok {
		var src image.Image = image.NewUniform(st.pen.c)
		if st.pen.grad != nil {
			src = image.NewUniform(st.pen.grad.ColorAt(int(x), int(y)))
		}
		drawPieces(img, src, face, ps, x, y, px)
	}
	if st.fontChar&(fontCharUnderline|fontCharStrike) != 0 {
		lw := max(px/14, 1)
		p.dc.SetLineWidth(lw)
		p.dc.SetDash()
		if st.fontChar&fontCharUnderline != 0 {
			p.dc.DrawLine(x, y+descent*0.5, x+w, y+descent*0.5)
			p.dc.Stroke()
		}
		if st.fontChar&fontCharStrike != 0 {
			p.dc.DrawLine(x, y-ascent*0.3, x+w, y-ascent*0.3)
			p.dc.Stroke()
		}
	}
}

// haloUnder returns the colour to put behind an edge label: the colour
// that most of the rectangle's outline already shows (the background, or
// the fill of the cluster the label sits in), slightly see-through so
// that a line passing under the label still reads as one line.
func (p *painter) haloUnder(x, y, w, h float64) color.NRGBA {
	img, ok := p.dc.Image().(*image.RGBA)
	if !ok {
		return p.halo
	}
	counts := make(map[color.RGBA]int, 8)
	best, bestN := color.RGBA{}, 0
	for _, fx := range []float64{0, 0.5, 1} {
		for _, fy := range []float64{0, 0.5, 1} {
			if fx == 0.5 && fy == 0.5 {
				continue
			}
			c := img.RGBAAt(int(x+fx*(w-1)), int(y+fy*(h-1)))
			counts[c]++
			if counts[c] > bestN {
				best, bestN = c, counts[c]
			}
		}
	}
	if bestN < 3 || best.A != 0xFF {
		return p.halo
	}
	return color.NRGBA{R: best.R, G: best.G, B: best.B, A: 0xE6}
}

// printable shapes Arabic, puts right-to-left text in display order and
// drops what neither the Go fonts nor the system fallbacks draw: emoji
// and other pictographs vanish, and letters of scripts no font has
// become "?" rather than empty boxes.
func (p *painter) printable(s string) string {
	s = fonts.ShapeArabic(s)
	if fonts.HasRTL(s) {
		rs, _ := fonts.Reorder(s, fonts.BaseRTL(s))
		s = string(rs)
	}
	clean := true
	for _, r := range s {
		if !p.drawable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case p.drawable(r):
			b.WriteRune(r)
		case unicode.In(r, unicode.So, unicode.Sk, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cs, unicode.Co, unicode.Cc):
			// pictographs, modifiers, joiners and controls
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// drawable reports whether the Go fonts or a fallback have a glyph for r.
func (p *painter) drawable(r rune) bool {
	if r >= 0x20 && r < 0x7F {
		return true
	}
	if ok, seen := p.glyphs[r]; seen {
		return ok
	}
	if p.glyphs == nil {
		p.glyphs = make(map[rune]bool)
	}
	i, err := loaded[fontRegular].GlyphIndex(&p.sfntBuf, r)
	ok := err == nil && i != 0 && !unicode.IsControl(r)
	if !ok && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) && r != 0x20E3 {
		ok = fallbackDraws(r)
	}
	p.glyphs[r] = ok
	return ok
}

// parseColor reads Graphviz's "#rrggbb" or "#rrggbbaa"; anything else is
// black, the Graphviz fallback for colours it does not know.
func parseColor(s string) color.NRGBA {
	s = strings.TrimPrefix(s, "#")
	if len(s) != 6 && len(s) != 8 {
		return color.NRGBA{A: 0xFF}
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return color.NRGBA{A: 0xFF}
	}
	if len(s) == 6 {
		return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xFF}
	}
	return color.NRGBA{R: uint8(v >> 24), G: uint8(v >> 16), B: uint8(v >> 8), A: uint8(v)}
}

// backgroundColor returns the fill of the root graph's background
// polygon, or ok false when it has none (bgcolor=transparent).
func backgroundColor(ops []op) (c color.NRGBA, ok bool) {
	fill := color.NRGBA{}
	for i := range ops {
		switch ops[i].Op {
		case "C":
			fill = parseColor(ops[i].Color)
		case "P":
			if fill.A > 0 {
				return fill, true
			}
		}
	}
	return color.NRGBA{}, false
}

func fallbackDraws(r rune) bool {
	for _, fb := range fonts.Fallbacks() {
		if fb.Has(r) {
			return true
		}
	}
	return false
}
