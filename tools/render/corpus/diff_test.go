package corpus

import (
	"image"
	"image/color"
	"image/draw"
)

// tolerance is what a rendered picture may differ from its golden by.
type tolerance struct {
	// Level is the largest difference of one channel (0-255) that is not a
	// difference. At 50 DPI a lost "l" leaves only light grey pixels (8
	// differ at 48, 1 at 64), so the level is low; the one-pixel shift
	// absorbs what anti-aliasing moves.
	Level uint8
	// Shift is how far (in pixels) a pixel may look for its match in the
	// other picture, so a glyph edge that lands one pixel over is not a
	// difference.
	Shift int
	// Pixels is how many differing pixels a picture may have. At 50 DPI a
	// lost list bullet makes 6, a lost "1" 27 (TestToleranceCatchesALostGlyph),
	// so the budget stays below a bullet.
	Pixels int
}

// pageTolerance is the tolerance of every picture of the corpus.
var pageTolerance = tolerance{Level: 48, Shift: 1, Pixels: 3}

// difference is how two pictures differ.
type difference struct {
	// Size is set when the pictures are not the same size; nothing else is
	// compared then.
	Size bool
	// Pixels counts the pixels that have no match within the tolerance,
	// in either picture.
	Pixels int
	// Mask marks those pixels in red over a faded copy of want.
	Mask *image.RGBA
}

// compare counts the pixels of got without a match in want, and of want
// without a match in got: a lost glyph shows in the first direction's
// complement, an added one in the other.
func compare(want, got image.Image, tol tolerance) difference {
	w, g := rgba(want), rgba(got)
	if w.Bounds().Size() != g.Bounds().Size() {
		return difference{Size: true}
	}
	b := w.Bounds()
	mask := image.NewRGBA(b)
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := w.RGBAAt(x, y)
			fade := color.RGBA{R: 255 - (255-p.R)/4, G: 255 - (255-p.G)/4, B: 255 - (255-p.B)/4, A: 255}
			if !matched(w, g, x, y, tol) || !matched(g, w, x, y, tol) {
				n++
				fade = color.RGBA{R: 255, A: 255}
			}
			mask.SetRGBA(x, y, fade)
		}
	}
	return difference{Pixels: n, Mask: mask}
}

// matched reports whether a's pixel at x, y has a pixel of b within
// tol.Shift whose every channel is within tol.Level of it.
func matched(a, b *image.RGBA, x, y int, tol tolerance) bool {
	p := a.RGBAAt(x, y)
	r := b.Bounds()
	for dy := -tol.Shift; dy <= tol.Shift; dy++ {
		for dx := -tol.Shift; dx <= tol.Shift; dx++ {
			q := image.Pt(x+dx, y+dy)
			if !q.In(r) {
				continue
			}
			c := b.RGBAAt(q.X, q.Y)
			if near(p.R, c.R, tol.Level) && near(p.G, c.G, tol.Level) && near(p.B, c.B, tol.Level) {
				return true
			}
		}
	}
	return false
}

func near(a, b, level uint8) bool {
	if a > b {
		return a-b <= level
	}
	return b-a <= level
}

// rgba returns img as an *image.RGBA, converting it if it is not one.
func rgba(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	r := image.NewRGBA(img.Bounds())
	draw.Draw(r, r.Bounds(), img, img.Bounds().Min, draw.Src)
	return r
}
