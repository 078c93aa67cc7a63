package chart

import (
	"context"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// drawScatter draws each series' points as translucent dots, so that
// where points pile up reads darker.
func drawScatter(ctx context.Context, c draw.Canvas, th *theme, s *Spec, f *frame) error {
	total := 0
	for _, se := range s.Series {
		total += len(se.Points)
	}
	r, alpha := vg.Length(3.2), 0.8
	switch {
	case total > 2000:
		r, alpha = 1.8, 0.55
	case total > 300:
		r, alpha = 2.4, 0.7
	}
	for k, se := range s.Series {
		if err := ctx.Err(); err != nil {
			return err
		}
		col := withAlpha(th.color(k), alpha)
		for _, p := range se.Points {
			fillCircle(c, vg.Point{X: f.x(p[0]), Y: f.y(p[1])}, r, col)
		}
	}
	return nil
}
