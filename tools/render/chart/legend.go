package chart

import (
	"image"
	"image/color"
	stddraw "image/draw"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// swatch is how a legend entry shows its series.
type swatch int

const (
	swatchBox  swatch = iota // bars, areas, pie slices
	swatchLine               // lines: a short stroke with a dot
	swatchDot                // scatter points
)

type legendEntry struct {
	name   string
	color  color.NRGBA
	swatch swatch
	dashes []vg.Length
}

// showLegend reports whether a chart gets a series legend: only when
// there is more than one series to tell apart. A pie's legend names its
// slices instead and is always drawn.
func showLegend(s *Spec) bool { return s.Type != TypePie && len(s.Series) > 1 }

func legendEntries(s *Spec, th *theme) []legendEntry {
	sw := swatchBox
	switch s.Type {
	case TypeLine:
		sw = swatchLine
	case TypeScatter:
		sw = swatchDot
	}
	out := make([]legendEntry, len(s.Series))
	for i, se := range s.Series {
		out[i] = legendEntry{name: clean(seriesName(se, i)), color: th.color(i), swatch: sw}
		if s.Type == TypeLine {
			out[i].dashes = dashes(i, len(th.series))
		}
	}
	return out
}

// drawLegend lays the entries out in rows under the title, left to right
// in series order, and returns the area left below them.
func drawLegend(c draw.Canvas, th *theme, entries []legendEntry, area vg.Rectangle) vg.Rectangle {
	sty := textStyle(legendSize, false, th.text)
	sty.YAlign = draw.YCenter
	const (
		swatchW = 14 // room for the swatch
		gap     = 5  // swatch to name
		spacing = 16 // between entries
	)
	rowH := sty.Height("Ag") * 1.55
	width := area.Max.X - area.Min.X
	x, y := area.Min.X, area.Max.Y-rowH/2
	for _, e := range entries {
		name := fit(e.name, sty, width/2)
		w := swatchW + gap + sty.Width(name)
		if x > area.Min.X && x+w > area.Max.X {
			x, y = area.Min.X, y-rowH
		}
		drawSwatch(c, e, vg.Point{X: x, Y: y}, th)
		c.FillText(sty, vg.Point{X: x + swatchW + gap, Y: y}, name)
		x += w + spacing
	}
	area.Max.Y = y - rowH/2 - 6
	return area
}

// drawSwatch draws an entry's swatch with its left edge at the vertical
// middle of pt.
func drawSwatch(c draw.Canvas, e legendEntry, pt vg.Point, th *theme) {
	switch e.swatch {
	case swatchLine:
		c.StrokeLine2(draw.LineStyle{Color: e.color, Width: 2, Dashes: e.dashes}, pt.X, pt.Y, pt.X+14, pt.Y)
		fillCircle(c, vg.Point{X: pt.X + 7, Y: pt.Y}, 2.6, e.color)
	case swatchDot:
		fillCircle(c, vg.Point{X: pt.X + 7, Y: pt.Y}, 3.6, e.color)
	default:
		fillRect(c, vg.Rectangle{Min: vg.Point{X: pt.X + 2, Y: pt.Y - 5}, Max: vg.Point{X: pt.X + 12, Y: pt.Y + 5}}, e.color)
	}
}

// fillRect fills an axis-aligned rectangle. On the bitmap canvas it
// writes the pixels directly, with edges snapped to whole pixels: bars get
// crisp edges, and the tens of thousands of bars of a large chart cost
// microseconds each instead of a path rasterisation each. This relies on
// the canvas carrying no transform, which holds: only text drawing
// rotates, and it restores the canvas after.
func fillRect(c draw.Canvas, r vg.Rectangle, col color.Color) {
	if r.Max.X <= r.Min.X || r.Max.Y <= r.Min.Y {
		return
	}
	img, ok := c.Canvas.(*vgimg.Canvas)
	if !ok {
		c.SetColor(col)
		c.Fill(r.Path())
		return
	}
	dst := img.Image()
	h := dst.Bounds().Dy()
	px := func(l vg.Length) int { return int(math.Round(l.Dots(img.DPI()))) }
	x0, x1 := px(r.Min.X), px(r.Max.X)
	y0, y1 := h-px(r.Max.Y), h-px(r.Min.Y)
	// Whatever is not empty shows at least one pixel wide and high.
	if x1 == x0 {
		x1++
	}
	if y1 == y0 {
		y1++
	}
	stddraw.Draw(dst, image.Rect(x0, y0, x1, y1), image.NewUniform(col), image.Point{}, stddraw.Over)
}

func fillCircle(c draw.Canvas, center vg.Point, r vg.Length, col color.Color) {
	var p vg.Path
	p.Move(vg.Point{X: center.X + r, Y: center.Y})
	p.Arc(center, r, 0, 2*math.Pi)
	p.Close()
	c.SetColor(col)
	c.Fill(p)
}

// dashes returns the dash pattern of line series i: solid while colours
// last, then dashed and dotted so that series sharing a colour differ.
func dashes(i, colors int) []vg.Length {
	switch (i / colors) % 3 {
	case 1:
		return []vg.Length{6, 3}
	case 2:
		return []vg.Length{1.5, 2.5}
	}
	return nil
}
