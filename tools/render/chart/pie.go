package chart

import (
	"cmp"
	"context"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pieTextSize sets the pie's legend a little larger than a series legend:
// it is the only text beside the pie and carries the numbers.
const pieTextSize = legendSize + 1.5

type pieSlice struct {
	label string
	value float64
	color color.NRGBA
}

// pieSlices returns the slices to draw, in the spec's order. Past
// maxPieSlices the palette runs out and slices get too thin to read, so
// the largest keep their own slice and the rest join one "Other" at the
// end.
func pieSlices(s *Spec, th *theme) []pieSlice {
	values := s.Series[0].Values
	keep := make([]bool, len(values))
	if len(values) <= maxPieSlices {
		for i := range keep {
			keep[i] = true
		}
	} else {
		order := make([]int, len(values))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(values[b], values[a]) })
		for _, i := range order[:maxPieSlices-1] {
			keep[i] = true
		}
	}
	var out []pieSlice
	other, others := 0.0, 0
	for i, v := range values {
		if !keep[i] {
			other += v
			others++
			continue
		}
		out = append(out, pieSlice{label: clean(s.Labels[i]), value: v, color: th.color(len(out))})
	}
	if others > 0 {
		out = append(out, pieSlice{label: "Other (" + itoa(others) + ")", value: other, color: th.other})
	}
	return out
}

// drawPie draws a pie with its legend beside it (or under it, when the
// picture is tall): each slice's label, value and share.
func drawPie(ctx context.Context, c draw.Canvas, th *theme, s *Spec, area vg.Rectangle) error {
	sl := pieSlices(s, th)
	total := 0.0
	for _, p := range sl {
		total += p.value
	}
	vf := numberFormat{kind: s.yFormat(), currency: s.Currency}

	name := textStyle(pieTextSize, false, th.text)
	name.YAlign = draw.YCenter
	num := textStyle(pieTextSize, false, th.muted)
	num.XAlign, num.YAlign = draw.XRight, draw.YCenter
	pct := num
	pct.Font = boldFont
	pct.Font.Size = legendSize + 0.5
	pct.Color = th.text

	labels := make([]string, len(sl))
	values := make([]string, len(sl))
	shares := make([]string, len(sl))
	for i, p := range sl {
		labels[i] = fit(p.label, name, 170)
		values[i] = vf.value(p.value)
		shares[i] = percentLabel(p.value / total)
	}
	const swatchW, gap, colGap = 14, 5, 18
	labelW := maxWidth(name, labels)
	valueW := maxWidth(num, values)
	shareW := max(maxWidth(pct, shares), pct.Width("100%"))
	legendW := swatchW + gap + labelW + colGap + valueW + colGap + shareW
	rowH := name.Height("Ag") * 2
	legendH := rowH * vg.Length(len(sl))

	aw, ah := area.Max.X-area.Min.X, area.Max.Y-area.Min.Y
	const space = 36 // between pie and legend
	var center vg.Point
	var r vg.Length
	var legendAt vg.Point // top left of the legend
	if aw-legendW-space >= ah*0.75 {
		r = min(ah, aw-legendW-space) / 2
		left := area.Min.X + (aw-(2*r+space+legendW))/2
		center = vg.Point{X: left + r, Y: area.Min.Y + ah/2}
		legendAt = vg.Point{X: left + 2*r + space, Y: center.Y + legendH/2}
	} else {
		r = min(aw, ah-legendH-space/2) / 2
		r = max(r, 20)
		center = vg.Point{X: area.Min.X + aw/2, Y: area.Max.Y - r}
		legendAt = vg.Point{X: area.Min.X + (aw-legendW)/2, Y: center.Y - r - space/2}
	}
	r *= 0.94

	if err := ctx.Err(); err != nil {
		return err
	}
	// Slices run clockwise from twelve o'clock, in the spec's order.
	angle := math.Pi / 2
	var edges []float64
	for _, p := range sl {
		sweep := p.value / total * 2 * math.Pi
		if sweep <= 0 {
			continue
		}
		var path vg.Path
		path.Move(center)
		path.Line(polar(center, r, angle))
		path.Arc(center, r, angle, -sweep)
		path.Close()
		c.SetColor(p.color)
		c.Fill(path)
		edges = append(edges, angle)
		angle -= sweep
	}
	if len(edges) > 1 {
		sep := draw.LineStyle{Color: th.background, Width: 1.6}
		for _, a := range edges {
			e := polar(center, r+1, a)
			c.StrokeLine2(sep, center.X, center.Y, e.X, e.Y)
		}
	}

	// Shares inside the slices wide enough to hold them.
	in := textStyle(pieTextSize, true, th.title)
	in.XAlign, in.YAlign = draw.XCenter, draw.YCenter
	angle = math.Pi / 2
	for i, p := range sl {
		sweep := p.value / total * 2 * math.Pi
		mid := angle - sweep/2
		angle -= sweep
		at := polar(center, r*0.68, mid)
		w := in.Width(shares[i])
		// The chord at the label's radius must clear the text.
		if sweep < math.Pi && 2*r*0.68*vg.Length(math.Sin(sweep/2)) < w+8 {
			continue
		}
		in.Color = readableOn(p.color)
		c.FillText(in, at, shares[i])
	}

	for i, p := range sl {
		y := legendAt.Y - rowH*(vg.Length(i)+0.5)
		x := legendAt.X
		drawSwatch(c, legendEntry{color: p.color}, vg.Point{X: x, Y: y}, th)
		c.FillText(name, vg.Point{X: x + swatchW + gap, Y: y}, labels[i])
		x += swatchW + gap + labelW + colGap + valueW
		c.FillText(num, vg.Point{X: x, Y: y}, values[i])
		c.FillText(pct, vg.Point{X: x + colGap + shareW, Y: y}, shares[i])
	}
	return nil
}

func polar(center vg.Point, r vg.Length, angle float64) vg.Point {
	sin, cos := math.Sincos(angle)
	return vg.Point{X: center.X + r*vg.Length(cos), Y: center.Y + r*vg.Length(sin)}
}
