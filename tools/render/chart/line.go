package chart

import (
	"context"
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Markers show the data points of a line while there are few enough to
// tell apart; past that they only clutter the line.
const maxMarkers = 30

// drawLines draws a line chart, or an area chart: lines with the space
// under them filled, overlapping translucently or stacked.
func drawLines(ctx context.Context, c draw.Canvas, th *theme, s *Spec, f *frame) error {
	n := len(s.Labels)
	area := s.Type == TypeArea
	base := make([]float64, n) // the top of the stack so far
	floor := f.y(max(f.ys.lo, min(0, f.ys.hi)))
	width := vg.Length(1.8)
	if area {
		width = 1.4
	}
	for k, se := range s.Series {
		if err := ctx.Err(); err != nil {
			return err
		}
		col := th.color(k)
		top := make([]vg.Point, n)
		for j, v := range se.Values {
			if s.Stacked {
				v += base[j]
			}
			top[j] = vg.Point{X: f.cat(j, n), Y: f.y(v)}
		}
		if area {
			poly := make([]vg.Point, 0, 2*n)
			poly = append(poly, top...)
			for j := n - 1; j >= 0; j-- {
				y := floor
				if s.Stacked {
					y = f.y(base[j])
				}
				poly = append(poly, vg.Point{X: f.cat(j, n), Y: y})
			}
			// Overlapping areas are see-through so none hides another;
			// stacked ones do not overlap and are opaque, so grid lines
			// do not show through them.
			fill := withAlpha(col, 0.22)
			if s.Stacked {
				fill = blend(col, th.background, 0.8)
			}
			if n == 1 {
				// One category has no width to fill: show it as a bar.
				fillBar(c, top[0].X-6, top[0].X+6, poly[1].Y, top[0].Y, fill)
			} else {
				fillPolygon(c, poly, fill)
			}
			if s.Stacked {
				for j, v := range se.Values {
					base[j] += v
				}
			}
		}
		if n > 1 {
			c.StrokeLines(draw.LineStyle{Color: col, Width: width, Dashes: dashes(k, len(th.series))}, top)
		}
		if !area && n <= maxMarkers || n == 1 {
			for _, pt := range top {
				fillCircle(c, pt, 3.4, th.background)
				fillCircle(c, pt, 2.5, col)
			}
		}
	}
	return nil
}

func fillPolygon(c draw.Canvas, pts []vg.Point, col color.Color) {
	var p vg.Path
	for i, pt := range pts {
		if i == 0 {
			p.Move(pt)
		} else {
			p.Line(pt)
		}
	}
	p.Close()
	c.SetColor(col)
	c.Fill(p)
}
