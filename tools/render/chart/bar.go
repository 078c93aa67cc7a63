package chart

import (
	"context"
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// drawBars draws a bar chart: one bar per category and series, side by
// side in a group (grouped) or on top of each other (stacked).
func drawBars(ctx context.Context, c draw.Canvas, th *theme, s *Spec, f *frame) error {
	n, m := len(s.Labels), len(s.Series)
	slot := f.spacing(n)
	zero := f.y(0)
	if s.Stacked || m == 1 {
		w := slot * 0.62
		// Positive values stack up from zero, negative ones down.
		pos := make([]float64, n)
		neg := make([]float64, n)
		for k, se := range s.Series {
			if err := ctx.Err(); err != nil {
				return err
			}
			col := th.color(k)
			for j, v := range se.Values {
				base := &pos[j]
				if v < 0 {
					base = &neg[j]
				}
				y0, y1 := f.y(*base), f.y(*base+v)
				*base += v
				x := f.cat(j, n)
				fillBar(c, x-w/2, x+w/2, y0, y1, col)
				// A hairline of background between stacked segments.
				if k > 0 && m > 1 && w > 3 && y0 != zero {
					c.StrokeLine2(draw.LineStyle{Color: th.background, Width: 0.8}, x-w/2, y0, x+w/2, y0)
				}
			}
		}
		return nil
	}

	group := slot * 0.78
	bw := group / vg.Length(m)
	gap := min(bw*0.12, 1.2) // between the bars of a group
	for k, se := range s.Series {
		if err := ctx.Err(); err != nil {
			return err
		}
		col := th.color(k)
		for j, v := range se.Values {
			x0 := f.cat(j, n) - group/2 + bw*vg.Length(k)
			fillBar(c, x0+gap/2, x0+bw-gap/2, zero, f.y(v), col)
		}
	}
	return nil
}

// fillBar fills the bar between x0 and x1 from y0 to y1, in either
// vertical order.
func fillBar(c draw.Canvas, x0, x1, y0, y1 vg.Length, col color.Color) {
	if y1 < y0 {
		y0, y1 = y1, y0
	}
	fillRect(c, vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}, col)
}
