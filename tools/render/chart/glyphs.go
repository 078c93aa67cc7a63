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
// for every pixel of the glyph's box, a colour boxed for each: about a
// quarter of a chart's time, its PNG included. Horizontal text lands on whole pixels, where every weight but
// one is zero; for that case glyphInterp does the same arithmetic on the
// bitmap's bytes, pixels without ink left alone (the generic path writes
// them back unchanged), so the chart is the same bytes. Rotated text
// takes the generic path's steps on the bytes directly
// (drawGlyphTransformed); anything else (images) goes to bilinear.
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

// drawGlyph draws a uniform colour through an alpha mask onto an RGBA
// bitmap, as draw.BiLinear's Transform would, and reports whether it
// could: false leaves dst untouched for the general path.
func drawGlyph(dst draw.Image, s2d f64.Aff3, src image.Image, sr image.Rectangle, op draw.Op, opts *draw.Options) bool {
	if op != draw.Over || opts == nil || opts.DstMask != nil {
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
	tx, ty := s2d[2], s2d[5]
	if s2d[0] != 1 || s2d[1] != 0 || s2d[3] != 0 || s2d[4] != 1 ||
		tx != math.Trunc(tx) || ty != math.Trunc(ty) || math.Abs(tx) > 1<<20 || math.Abs(ty) > 1<<20 {
		drawGlyphTransformed(rgba, s2d, u, sr, mask, opts.SrcMaskP)
		return true
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

// drawGlyphTransformed is draw.BiLinear's Transform of a uniform colour
// through an alpha mask onto an RGBA bitmap under any affine transform
// (a rotated label), step for step as x/image/draw's generic path does
// it (Kernel.Transform, transform_Image_Image_Over), with the same
// floating-point operations in the same order, so the same bytes; it
// reads the mask and the bitmap directly instead of through image.Image,
// which boxed a colour for every pixel of the glyph's box.
func drawGlyphTransformed(dst *image.RGBA, s2d f64.Aff3, u *image.Uniform, sr image.Rectangle, mask *image.Alpha, mp image.Point) {
	dr := transformRect(&s2d, &sr)
	adr := dst.Bounds().Intersect(dr)
	if adr.Empty() || sr.Empty() {
		return
	}
	d2s := invert(&s2d)
	bias := transformRect(&d2s, &adr).Min
	bias.X--
	bias.Y--
	d2s[2] -= float64(bias.X)
	d2s[5] -= float64(bias.Y)
	adr = adr.Sub(dr.Min)

	xscale := math.Abs(d2s[0])
	if s := math.Abs(d2s[1]); xscale < s {
		xscale = s
	}
	yscale := math.Abs(d2s[3])
	if s := math.Abs(d2s[4]); yscale < s {
		yscale = s
	}
	// BiLinear: support 1, weight 1-t.
	const support = 1.0
	xHalfWidth, xKernelArgScale := support, 1.0
	if xscale > 1 {
		xHalfWidth *= xscale
		xKernelArgScale = 1 / xscale
	}
	yHalfWidth, yKernelArgScale := support, 1.0
	if yscale > 1 {
		yHalfWidth *= yscale
		yKernelArgScale = 1 / yscale
	}
	xWeights := make([]float64, 1+2*int(math.Ceil(xHalfWidth)))
	yWeights := make([]float64, 1+2*int(math.Ceil(yHalfWidth)))

	sr16, sg16, sb16, sa16 := u.C.RGBA()
	maskAt := func(x, y int) uint32 {
		if !(image.Point{x, y}).In(mask.Rect) {
			return 0
		}
		a := uint32(mask.Pix[mask.PixOffset(x, y)])
		return a | a<<8
	}
	for dy := int32(adr.Min.Y); dy < int32(adr.Max.Y); dy++ {
		dyf := float64(dr.Min.Y+int(dy)) + 0.5
		for dx := int32(adr.Min.X); dx < int32(adr.Max.X); dx++ {
			dxf := float64(dr.Min.X+int(dx)) + 0.5
			sx := float64(d2s[0]*dxf) + float64(d2s[1]*dyf) + d2s[2]
			sy := float64(d2s[3]*dxf) + float64(d2s[4]*dyf) + d2s[5]
			if !(image.Point{int(sx) + bias.X, int(sy) + bias.Y}).In(sr) {
				continue
			}

			sx += float64(bias.X)
			sx -= 0.5
			ix := int(math.Floor(sx - xHalfWidth))
			if ix < sr.Min.X {
				ix = sr.Min.X
			}
			jx := int(math.Ceil(sx + xHalfWidth))
			if jx > sr.Max.X {
				jx = sr.Max.X
			}
			totalXWeight := 0.0
			for kx := ix; kx < jx; kx++ {
				xWeight := 0.0
				if t := math.Abs((sx - float64(kx)) * xKernelArgScale); t < support {
					xWeight = 1 - t
				}
				xWeights[kx-ix] = xWeight
				totalXWeight += xWeight
			}
			for x := range xWeights[:jx-ix] {
				xWeights[x] /= totalXWeight
			}

			sy += float64(bias.Y)
			sy -= 0.5
			iy := int(math.Floor(sy - yHalfWidth))
			if iy < sr.Min.Y {
				iy = sr.Min.Y
			}
			jy := int(math.Ceil(sy + yHalfWidth))
			if jy > sr.Max.Y {
				jy = sr.Max.Y
			}
			totalYWeight := 0.0
			for ky := iy; ky < jy; ky++ {
				yWeight := 0.0
				if t := math.Abs((sy - float64(ky)) * yKernelArgScale); t < support {
					yWeight = 1 - t
				}
				yWeights[ky-iy] = yWeight
				totalYWeight += yWeight
			}
			for y := range yWeights[:jy-iy] {
				yWeights[y] /= totalYWeight
			}

			var pr, pg, pb, pa float64
			for ky := iy; ky < jy; ky++ {
				if yWeight := yWeights[ky-iy]; yWeight != 0 {
					for kx := ix; kx < jx; kx++ {
						if w := xWeights[kx-ix] * yWeight; w != 0 {
							ma := maskAt(mp.X+kx, mp.Y+ky)
							pru, pgu, pbu, pau := sr16*ma/0xffff, sg16*ma/0xffff, sb16*ma/0xffff, sa16*ma/0xffff
							pr += float64(float64(pru) * w)
							pg += float64(float64(pgu) * w)
							pb += float64(float64(pbu) * w)
							pa += float64(float64(pau) * w)
						}
					}
				}
			}
			if pr > pa {
				pr = pa
			}
			if pg > pa {
				pg = pa
			}
			if pb > pa {
				pb = pa
			}

			i := dst.PixOffset(dr.Min.X+int(dx), dr.Min.Y+int(dy))
			p := dst.Pix[i : i+4 : i+4]
			pa0 := uint32(fffftou(pa))
			pa1 := 0xffff - pa0
			p[0] = uint8(uint16(uint32(p[0])*0x101*pa1/0xffff+uint32(fffftou(pr))) >> 8)
			p[1] = uint8(uint16(uint32(p[1])*0x101*pa1/0xffff+uint32(fffftou(pg))) >> 8)
			p[2] = uint8(uint16(uint32(p[2])*0x101*pa1/0xffff+uint32(fffftou(pb))) >> 8)
			p[3] = uint8(uint16(uint32(p[3])*0x101*pa1/0xffff+pa0) >> 8)
		}
	}
}

// fffftou, invert and transformRect are x/image/draw's own.
func fffftou(f float64) uint16 {
	i := int32(f + 0.5)
	if i > 0xffff {
		return 0xffff
	}
	if i > 0 {
		return uint16(i)
	}
	return 0
}

func invert(m *f64.Aff3) f64.Aff3 {
	m00 := +m[3*1+1]
	m01 := -m[3*0+1]
	m02 := +float64(m[3*1+2]*m[3*0+1]) - float64(m[3*1+1]*m[3*0+2])
	m10 := -m[3*1+0]
	m11 := +m[3*0+0]
	m12 := +float64(m[3*1+0]*m[3*0+2]) - float64(m[3*1+2]*m[3*0+0])
	det := float64(m00*m11) - float64(m10*m01)
	return f64.Aff3{m00 / det, m01 / det, m02 / det, m10 / det, m11 / det, m12 / det}
}

func transformRect(s2d *f64.Aff3, sr *image.Rectangle) (dr image.Rectangle) {
	ps := [...]image.Point{
		{sr.Min.X, sr.Min.Y},
		{sr.Max.X, sr.Min.Y},
		{sr.Min.X, sr.Max.Y},
		{sr.Max.X, sr.Max.Y},
	}
	for i, p := range ps {
		sxf := float64(p.X)
		syf := float64(p.Y)
		dx := int(math.Floor(float64(s2d[0]*sxf) + float64(s2d[1]*syf) + s2d[2]))
		dy := int(math.Floor(float64(s2d[3]*sxf) + float64(s2d[4]*syf) + s2d[5]))
		if i == 0 {
			dr = image.Rectangle{Min: image.Point{dx, dy}, Max: image.Point{dx + 1, dy + 1}}
			continue
		}
		if dr.Min.X > dx {
			dr.Min.X = dx
		}
		dx++
		if dr.Max.X < dx {
			dr.Max.X = dx
		}
		if dr.Min.Y > dy {
			dr.Min.Y = dy
		}
		dy++
		if dr.Max.Y < dy {
			dr.Max.Y = dy
		}
	}
	return dr
}
