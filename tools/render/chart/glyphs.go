package chart

import (
	"image"
	"math"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// glyphInterp is the interpolator of a chart's gg context. gg draws each
// glyph of a string by transforming the glyph's mask onto the bitmap with
// its interpolator (bilinear), which takes x/image/draw's generic path
// for masked sources: a weighted sum through the image.Image interfaces
// for every pixel of the glyph's box, a third of the time a chart takes
// to draw. Horizontal text lands on whole pixels, where every weight but
// one is zero; for that case glyphInterp does the same arithmetic on the
// bitmap's bytes, pixels without ink left alone (the generic path writes
// them back unchanged), so the chart is the same bytes. Anything else
// (rotated labels, images) goes to bilinear as before.
type glyphInterp struct{}

// interp is the interpolator charts are drawn with; tests compare it
// with bilinear.
var interp draw.Interpolator = glyphInterp{}

var bilinear draw.Interpolator = draw.BiLinear

func (glyphInterp) Scale(dst draw.Image, dr image.Rectangle, src image.Image, sr image.Rectangle, op draw.Op, opts *draw.Options) {
	bilinear.Scale(dst, dr, src, sr, op, opts)
}

func (glyphInterp) Transform(dst draw.Image, s2d f64.Aff3, src image.Image, sr image.Rectangle, op draw.Op, opts *draw.Options) {
	if !drawGlyph(dst, s2d, src, sr, op, opts) {
		bilinear.Transform(dst, s2d, src, sr, op, opts)
	}
}

// drawGlyph draws a uniform colour through an alpha mask moved by whole
// pixels, as draw.BiLinear's Transform would, and reports whether it
// could: false leaves dst untouched for the general path.
func drawGlyph(dst draw.Image, s2d f64.Aff3, src image.Image, sr image.Rectangle, op draw.Op, opts *draw.Options) bool {
	if op != draw.Over || opts == nil || opts.DstMask != nil || s2d[0] != 1 || s2d[1] != 0 || s2d[3] != 0 || s2d[4] != 1 {
		return false
	}
	tx, ty := s2d[2], s2d[5]
	if tx != math.Trunc(tx) || ty != math.Trunc(ty) || math.Abs(tx) > 1<<20 || math.Abs(ty) > 1<<20 {
		return false
	}
	rgba, ok := dst.(*image.RGBA)
	if !ok {
		return false
	}
	u, ok := src.(*image.Uniform)
	if !ok {
		return false
	}
	mask, ok := opts.SrcMask.(*image.Alpha)
	if !ok {
		return false
	}
	// The source's own bounds: a uniform colour is infinite, so sr is
	// every source pixel drawn.
	sr16, sg16, sb16, sa16 := u.C.RGBA()
	dx, dy := int(tx), int(ty)
	bounds := rgba.Bounds()
	mp := opts.SrcMaskP
	for ky := sr.Min.Y; ky < sr.Max.Y; ky++ {
		y := ky + dy
		if y < bounds.Min.Y || y >= bounds.Max.Y {
			continue
		}
		my := mp.Y + ky
		if my < mask.Rect.Min.Y || my >= mask.Rect.Max.Y {
			continue // no ink: the general path writes the pixel back as it was
		}
		for kx := sr.Min.X; kx < sr.Max.X; kx++ {
			x := kx + dx
			mx := mp.X + kx
			if x < bounds.Min.X || x >= bounds.Max.X || mx < mask.Rect.Min.X || mx >= mask.Rect.Max.X {
				continue
			}
			a := mask.Pix[mask.PixOffset(mx, my)]
			if a == 0 {
				continue
			}
			// x/image/draw's Kernel transform_Image_Image_Over with one
			// weight of 1: the source premultiplied by the mask, clamped
			// to its alpha, over the destination, in 16 bits.
			ma := uint32(a) * 0x101
			pr, pg, pb, pa := sr16*ma/0xffff, sg16*ma/0xffff, sb16*ma/0xffff, sa16*ma/0xffff
			pr, pg, pb = min(pr, pa), min(pg, pa), min(pb, pa)
			pa1 := 0xffff - pa
			i := rgba.PixOffset(x, y)
			p := rgba.Pix[i : i+4 : i+4]
			p[0] = uint8(uint16(uint32(p[0])*0x101*pa1/0xffff+pr) >> 8)
			p[1] = uint8(uint16(uint32(p[1])*0x101*pa1/0xffff+pg) >> 8)
			p[2] = uint8(uint16(uint32(p[2])*0x101*pa1/0xffff+pb) >> 8)
			p[3] = uint8(uint16(uint32(p[3])*0x101*pa1/0xffff+pa) >> 8)
		}
	}
	return true
}
