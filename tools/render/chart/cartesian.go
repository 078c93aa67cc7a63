package chart

import (
	"context"
	"math"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// frame is the layout of a chart with axes: where the data goes and what
// the axes show.
type frame struct {
	plot    vg.Rectangle // the data region
	ys      scale
	ylabels []string
	cats    catAxis // bar, line, area
	xs      scale   // scatter
	xlabels []string
	edge    bool // categories run edge to edge (line, area) rather than in slots (bar)
}

// y maps a value to the canvas.
func (f *frame) y(v float64) vg.Length {
	return f.plot.Min.Y + vg.Length(position(v, f.ys))*(f.plot.Max.Y-f.plot.Min.Y)
}

// x maps a scatter x value to the canvas.
func (f *frame) x(v float64) vg.Length {
	return f.plot.Min.X + vg.Length(position(v, f.xs))*(f.plot.Max.X-f.plot.Min.X)
}

// position returns where v lies in the scale's range, 0 at its low end and 1
// at its high end. Values stay within [-1, 2]: the rasteriser must never
// see a coordinate that is not finite or far outside the picture.
func position(v float64, s scale) float64 {
	t := (v - s.lo) / (s.hi - s.lo)
	if math.IsNaN(t) {
		return 0
	}
	return math.Max(-1, math.Min(t, 2))
}

// cat maps category i of n to the canvas: the middle of its slot, or for
// edge-to-edge charts, evenly from the left edge to the right one.
func (f *frame) cat(i, n int) vg.Length {
	w := f.plot.Max.X - f.plot.Min.X
	if !f.edge {
		return f.plot.Min.X + w*(vg.Length(i)+0.5)/vg.Length(n)
	}
	if n == 1 {
		return f.plot.Min.X + w/2
	}
	return f.plot.Min.X + w*vg.Length(i)/vg.Length(n-1)
}

// spacing is the distance between neighbouring categories.
func (f *frame) spacing(n int) vg.Length {
	w := f.plot.Max.X - f.plot.Min.X
	if f.edge && n > 1 {
		return w / vg.Length(n-1)
	}
	return w / vg.Length(n)
}

// valueRange returns the range of values the y axis must cover.
func valueRange(s *Spec) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	see := func(v float64) { lo, hi = math.Min(lo, v), math.Max(hi, v) }
	switch {
	case s.Type == TypeScatter:
		for _, se := range s.Series {
			for _, p := range se.Points {
				see(p[1])
			}
		}
		return lo, hi
	case s.Stacked:
		for j := range s.Labels {
			pos, neg := stackTotals(s, j)
			see(pos)
			see(neg)
		}
	default:
		for _, se := range s.Series {
			for _, v := range se.Values {
				see(v)
			}
		}
	}
	// Bars and areas are read by their length from zero, so zero is on
	// the axis. Lines are read by their shape; zero joins them only when
	// it is near anyway, so that a line is not squashed against the top.
	switch {
	case s.Type != TypeLine, lo >= 0 && lo <= hi/2, hi <= 0 && hi >= lo/2:
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	return lo, hi
}

// stackTotals returns the sums of the positive and of the negative values
// of category j: stacks grow up from zero and down from zero separately.
func stackTotals(s *Spec, j int) (pos, neg float64) {
	for _, se := range s.Series {
		if v := se.Values[j]; v > 0 {
			pos += v
		} else {
			neg += v
		}
	}
	return pos, neg
}

// widen grows [lo, hi] by 3% on each side.
func widen(lo, hi float64) (float64, float64) {
	pad := (hi - lo) * 0.03
	return lo - pad, hi + pad
}

// xRange returns the range of a scatter chart's x values; (+Inf, -Inf)
// for other charts.
func xRange(s *Spec) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, se := range s.Series {
		for _, p := range se.Points {
			lo, hi = math.Min(lo, p[0]), math.Max(hi, p[0])
		}
	}
	return lo, hi
}

// tickTarget is how many value intervals fit a length: grid lines about
// 34 pt apart at the closest.
func tickTarget(length vg.Length) int {
	return max(2, min(int(length/34), 8))
}

// layout places the plot region inside area, leaving room for the axis
// titles and tick labels. The tick labels' size depends on the region and
// the region on their size, so it settles in two passes.
func layout(s *Spec, area vg.Rectangle, tick, axis text.Style) *frame {
	f := &frame{edge: s.Type == TypeLine || s.Type == TypeArea}
	yf := numberFormat{kind: s.yFormat(), currency: s.Currency}
	xf := numberFormat{kind: s.XFormat, currency: s.Currency}
	if xf.kind == "" {
		xf.kind = FormatNumber
	}
	ylo, yhi := valueRange(s)
	xlo, xhi := xRange(s)
	if s.Type == TypeScatter {
		// Dots have a size: a little room keeps the outermost off the
		// plot's edges.
		ylo, yhi = widen(ylo, yhi)
		xlo, xhi = widen(xlo, xhi)
	}

	top, bottom := area.Max.Y, area.Min.Y
	if s.YLabel != "" {
		top -= axis.Height("Ag") + 8
	}
	if s.XLabel != "" {
		bottom += axis.Height("Ag") + 6
	}
	top -= tick.Height("0") / 2 // the top tick label is centred on its line

	var labels []string
	if s.categorical() {
		labels = make([]string, len(s.Labels))
		for i, l := range s.Labels {
			labels[i] = clean(l)
		}
	}
	band := tick.Height("Ag") + 8
	for pass := 0; pass < 2; pass++ {
		f.ys = niceScale(ylo, yhi, tickTarget(top-bottom-band))
		f.ylabels = yf.ticks(f.ys)
		for i, l := range f.ylabels {
			f.ylabels[i] = fit(l, tick, (area.Max.X-area.Min.X)/4)
		}
		left := area.Min.X + maxWidth(tick, f.ylabels) + 8
		right := area.Max.X
		if s.categorical() {
			n := len(labels)
			f.plot = vg.Rectangle{Min: vg.Point{X: left, Y: bottom + band}, Max: vg.Point{X: right, Y: top}}
			f.cats = layoutCategories(labels, tick, f.spacing(n), (top-bottom)*0.3, f.plot.Max.X-f.plot.Min.X, f.edge)
			// Labels centred on the end categories, or rotated ones
			// hanging left of the first, must stay inside the picture.
			left = max(left, area.Min.X+f.cats.overhangLeft-(f.cat(0, n)-f.plot.Min.X))
			right = min(right, area.Max.X-f.cats.overhangRight+(f.plot.Max.X-f.cat(n-1, n)))
			band = f.cats.band
		} else {
			f.xs = niceScale(xlo, xhi, max(2, min(int((right-left)/70), 10)))
			f.xlabels = xf.ticks(f.xs)
			if len(f.xlabels) > 0 {
				left = max(left, area.Min.X+tick.Width(f.xlabels[0])/2)
				right -= tick.Width(f.xlabels[len(f.xlabels)-1]) / 2
			}
			band = tick.Height("Ag") + 8
		}
		f.plot = vg.Rectangle{Min: vg.Point{X: left, Y: bottom + band}, Max: vg.Point{X: right, Y: top}}
	}
	return f
}

func maxWidth(sty text.Style, ss []string) vg.Length {
	var w vg.Length
	for _, s := range ss {
		w = max(w, sty.Width(s))
	}
	return w
}

// drawCartesian draws a bar, line, area or scatter chart into area.
func drawCartesian(ctx context.Context, c draw.Canvas, th *theme, s *Spec, area vg.Rectangle) error {
	tick := textStyle(tickSize, false, th.muted)
	axis := textStyle(axisTitleSize, false, th.text)
	f := layout(s, area, tick, axis)
	p := f.plot

	grid := draw.LineStyle{Color: th.grid, Width: 0.6}
	for _, t := range f.ys.ticks {
		y := f.y(t)
		c.StrokeLine2(grid, p.Min.X, y, p.Max.X, y)
	}
	if s.Type == TypeScatter {
		for _, t := range f.xs.ticks {
			x := f.x(t)
			c.StrokeLine2(grid, x, p.Min.Y, x, p.Max.Y)
		}
	}

	var err error
	switch s.Type {
	case TypeBar:
		err = drawBars(ctx, c, th, s, f)
	case TypeLine, TypeArea:
		err = drawLines(ctx, c, th, s, f)
	case TypeScatter:
		err = drawScatter(ctx, c, th, s, f)
	}
	if err != nil {
		return err
	}

	// The zero line (or the bottom of a line chart that does not reach
	// zero) anchors the eye; scatter charts have only their grid.
	if s.categorical() {
		y := p.Min.Y
		if f.ys.lo <= 0 && f.ys.hi >= 0 {
			y = f.y(0)
		}
		c.StrokeLine2(draw.LineStyle{Color: th.baseline, Width: 0.9}, p.Min.X, y, p.Max.X, y)
	}

	ytick := tick
	ytick.XAlign, ytick.YAlign = draw.XRight, draw.YCenter
	for i, t := range f.ys.ticks {
		c.FillText(ytick, vg.Point{X: p.Min.X - 7, Y: f.y(t)}, f.ylabels[i])
	}
	if s.categorical() {
		drawCategoryLabels(c, tick, f, len(s.Labels))
	} else {
		xtick := tick
		xtick.XAlign, xtick.YAlign = draw.XCenter, draw.YTop
		for i, t := range f.xs.ticks {
			c.FillText(xtick, vg.Point{X: f.x(t), Y: p.Min.Y - 5}, f.xlabels[i])
		}
	}

	// Axis titles: the y title sits above the value labels, read without
	// turning the head; the x title is centred under the axis.
	if s.YLabel != "" {
		sty := axis
		sty.YAlign = draw.YTop
		c.FillText(sty, vg.Point{X: area.Min.X, Y: area.Max.Y}, fit(clean(s.YLabel), sty, area.Max.X-area.Min.X))
	}
	if s.XLabel != "" {
		sty := axis
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		mid := (p.Min.X + p.Max.X) / 2
		half := min(mid-area.Min.X, area.Max.X-mid)
		c.FillText(sty, vg.Point{X: mid, Y: area.Min.Y}, fit(clean(s.XLabel), sty, 2*half))
	}
	return nil
}
