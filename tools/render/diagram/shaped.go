package diagram

import (
	"image"
	"math"
	"unicode"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// A label is drawn in pieces: stretches of scripts that need shaping
// (Devanagari, Thai, Khmer and the like) are shaped by go-text/typesetting
// in the fallback font that has them and filled as outlines; the rest is
// drawn by character through the face's fallback chain, as before.
type labelPiece struct {
	s      string
	shaped *fonts.Shaped // nil: drawn by character
}

// pieces cuts s for drawing at px pixels.
func (p *painter) pieces(s string, px float64) []labelPiece {
	if !fonts.NeedsShaping(s) {
		return []labelPiece{{s: s}}
	}
	var out []labelPiece
	rs := []rune(s)
	start := 0
	flush := func(end int) {
		if end > start {
			out = append(out, labelPiece{s: string(rs[start:end])})
		}
		start = end
	}
	for i := 0; i < len(rs); {
		if !fonts.NeedsShaping(string(rs[i])) {
			i++
			continue
		}
		fb := shapingFallback(rs[i])
		if fb == nil {
			i++
			continue
		}
		j := i + 1
		for j < len(rs) && (fonts.NeedsShaping(string(rs[j])) || unicode.In(rs[j], unicode.Mn, unicode.Mc, unicode.Cf)) && fb.Has(rs[j]) {
			j++
		}
		sh, ok := fonts.Shape(fb, string(rs[i:j]), px)
		if !ok {
			i = j
			continue
		}
		flush(i)
		out = append(out, labelPiece{s: string(rs[i:j]), shaped: sh})
		start, i = j, j
	}
	flush(len(rs))
	return out
}

func shapingFallback(r rune) *fonts.Fallback {
	for _, fb := range fonts.Fallbacks() {
		if fb.Has(r) {
			return fb
		}
	}
	return nil
}

// measure returns the width of the pieces in pixels.
func measure(face font.Face, ps []labelPiece) float64 {
	var w float64
	for _, pc := range ps {
		if pc.shaped != nil {
			w += pc.shaped.Advance
		} else {
			w += float64(font.MeasureString(face, pc.s)) / 64
		}
	}
	return w
}

// drawPieces draws the pieces from (x, y) on the baseline.
func drawPieces(img *image.RGBA, src image.Image, face font.Face, ps []labelPiece, x, y, px float64) {
	for _, pc := range ps {
		if pc.shaped == nil {
			d := font.Drawer{Dst: img, Src: src, Face: face, Dot: fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y * 64)}}
			d.DrawString(pc.s)
			x += float64(font.MeasureString(face, pc.s)) / 64
			continue
		}
		// The outlines are rasterised in a box around the run: marks
		// reach above and below the line, so a size's worth each way.
		box := image.Rect(int(math.Floor(x-px)), int(math.Floor(y-2*px)), int(math.Ceil(x+pc.shaped.Advance+px)), int(math.Ceil(y+px)))
		if box = box.Intersect(img.Bounds()); !box.Empty() {
			r := vector.NewRasterizer(box.Dx(), box.Dy())
			pc.shaped.Draw(x-float64(box.Min.X), y-float64(box.Min.Y), true, rasterPen{r})
			r.Draw(img, box, src, box.Min)
		}
		x += pc.shaped.Advance
	}
}

// rasterPen feeds a shaped run's outlines to a vector rasteriser.
type rasterPen struct{ r *vector.Rasterizer }

func (p rasterPen) MoveTo(x, y float64) { p.r.MoveTo(float32(x), float32(y)) }
func (p rasterPen) LineTo(x, y float64) { p.r.LineTo(float32(x), float32(y)) }
func (p rasterPen) QuadTo(cx, cy, x, y float64) {
	p.r.QuadTo(float32(cx), float32(cy), float32(x), float32(y))
}
func (p rasterPen) CubeTo(c1x, c1y, c2x, c2y, x, y float64) {
	p.r.CubeTo(float32(c1x), float32(c1y), float32(c2x), float32(c2y), float32(x), float32(y))
}
func (p rasterPen) Close() { p.r.ClosePath() }
