package chart

import (
	"math"
	"strings"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// catAxis is how the category labels of an x axis are shown.
type catAxis struct {
	labels  []string // the text under each category, "" where thinned out
	rotated bool     // set at 45°, reading up to the category
	band    vg.Length
	// How far the first and last labels reach past their category.
	overhangLeft, overhangRight vg.Length
}

const sin45 = 0.70710678

// layoutCategories decides how n category labels share an axis of the
// given width with spacing between categories: straight if they fit,
// otherwise rotated 45° (bars, where every bar should be named) or
// thinned to every k-th label (lines and areas, whose axis reads like a
// time line). Labels never overlap: when even rotated ones do not fit,
// only every k-th is shown. maxBand caps the height rotated labels take;
// longer labels are shortened with an ellipsis.
func layoutCategories(labels []string, sty text.Style, spacing, maxBand, width vg.Length, preferThin bool) catAxis {
	const pad = 10 // between neighbouring labels
	lh := sty.Height("Ag")
	fitted := make([]string, len(labels))
	var maxW vg.Length
	for i, l := range labels {
		fitted[i] = fit(l, sty, max(width/3, 40))
		maxW = max(maxW, sty.Width(fitted[i]))
	}
	room := spacing - pad
	lines := 1
	if maxW > room {
		// Labels of several words may fit on two lines ("United
		// Kingdom"); that keeps every label whole and level.
		wrapped := make([]string, len(fitted))
		fits := true
		for i, l := range fitted {
			wrapped[i] = l
			if sty.Width(l) > room {
				wrapped[i], fits = wrap2(l, sty, room)
				if !fits {
					break
				}
			}
		}
		if fits {
			fitted, maxW, lines = wrapped, maxWidth(sty, wrapped), 2
		}
	}
	// A few long labels among short ones are shortened rather than
	// turning every label on the axis.
	if long := countWider(fitted, sty, room); long > 0 && long <= len(labels)/5 && room >= 40 {
		maxW = 0
		for i := range fitted {
			fitted[i] = fit(fitted[i], sty, room)
			maxW = max(maxW, sty.Width(fitted[i]))
		}
	}
	stepH := steps(maxW+pad, spacing)
	stepR := steps(lh/sin45+pad/2, spacing)

	a := catAxis{}
	step := stepH
	if stepH > 1 && (stepR == 1 || !preferThin) {
		a.rotated = true
		step = stepR
		maxLen := (maxBand - lh*sin45) / sin45
		maxW = 0
		for i := range fitted {
			if i%step == 0 {
				fitted[i] = fit(fitted[i], sty, max(maxLen, 30))
				maxW = max(maxW, sty.Width(fitted[i]))
			}
		}
	}
	a.labels = make([]string, len(labels))
	for i := range fitted {
		if i%step == 0 {
			a.labels[i] = fitted[i]
		}
	}
	if a.rotated {
		a.band = maxW*sin45 + lh*sin45 + 8
		a.overhangLeft = sty.Width(a.labels[0])*sin45 + lh*sin45/2
	} else {
		a.band = sty.Height("Ag") + vg.Length(lines-1)*lineHeight(sty) + 8
		a.overhangLeft = sty.Width(a.labels[0]) / 2
		a.overhangRight = sty.Width(a.labels[lastShown(a.labels)]) / 2
	}
	return a
}

func countWider(labels []string, sty text.Style, width vg.Length) int {
	n := 0
	for _, l := range labels {
		if sty.Width(l) > width {
			n++
		}
	}
	return n
}

func lineHeight(sty text.Style) vg.Length { return sty.Height("Ag") * 1.1 }

// wrap2 breaks s onto two lines at the space that makes the longer line
// shortest, and reports whether both then fit width.
func wrap2(s string, sty text.Style, width vg.Length) (string, bool) {
	best, bestW := "", vg.Length(math.Inf(1))
	for i, r := range s {
		if r != ' ' {
			continue
		}
		cand := s[:i] + "\n" + s[i+1:]
		if w := sty.Width(cand); w < bestW {
			best, bestW = cand, w
		}
	}
	return best, best != "" && bestW <= width
}

// steps is the smallest k such that every k-th label has room for need.
func steps(need, spacing vg.Length) int {
	if spacing <= 0 {
		return math.MaxInt32
	}
	k := int(math.Ceil(float64(need / spacing)))
	return max(k, 1)
}

func lastShown(labels []string) int {
	for i := len(labels) - 1; i > 0; i-- {
		if labels[i] != "" {
			return i
		}
	}
	return 0
}

func drawCategoryLabels(c draw.Canvas, sty text.Style, f *frame, n int) {
	y := f.plot.Min.Y - 6
	if f.cats.rotated {
		sty.Rotation = math.Pi / 4
		sty.XAlign, sty.YAlign = draw.XRight, draw.YCenter
		y -= 2
	} else {
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	}
	for i, l := range f.cats.labels {
		if l == "" {
			continue
		}
		// Lines are set one by one: the text handler's own line spacing
		// is tighter than the font's and shifts two-line labels down.
		for k, line := range strings.Split(l, "\n") {
			c.FillText(sty, vg.Point{X: f.cat(i, n), Y: y - vg.Length(k)*lineHeight(sty)}, line)
		}
	}
}
