package chart

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// TestGlyphsAsBilinear draws random glyph masks at whole-pixel offsets,
// partly off the bitmap and partly outside their mask, over random
// pixels, and checks each result is the bytes draw.BiLinear makes.
func TestGlyphsAsBilinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 300 {
		w, h := 1+rng.IntN(20), 1+rng.IntN(20)
		mask := image.NewAlpha(image.Rect(3, 5, 3+w, 5+h))
		for j := range mask.Pix {
			switch rng.IntN(3) {
			case 0:
				mask.Pix[j] = 0
			case 1:
				mask.Pix[j] = 255
			default:
				mask.Pix[j] = byte(rng.IntN(256))
			}
		}
		base := image.NewRGBA(image.Rect(0, 0, 30, 25))
		for j := range base.Pix {
			base.Pix[j] = byte(rng.IntN(256))
		}
		if i%2 == 0 {
			for j := 3; j < len(base.Pix); j += 4 {
				base.Pix[j] = 255 // an opaque bitmap, as a chart's
			}
		}
		c := color.NRGBA{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))}
		if i%3 == 0 {
			c.A = 255
		}
		src := image.NewUniform(c)
		// The glyph's box, relative to its origin as gg passes it, and
		// its mask point; the box may reach past the mask.
		sr := image.Rect(0, 0, w+rng.IntN(3)-1, h+rng.IntN(3)-1)
		mp := image.Pt(3+rng.IntN(3)-1, 5+rng.IntN(3)-1)
		s2d := f64.Aff3{1, 0, float64(rng.IntN(40) - 10), 0, 1, float64(rng.IntN(35) - 10)}
		switch i % 4 {
		case 1: // rotated, as an axis title or slanted category labels
			sin, cos := math.Sincos(rng.Float64() * 2 * math.Pi)
			if i%8 == 1 {
				sin, cos = math.Sincos(math.Pi / 2)
			}
			s2d = f64.Aff3{cos, -sin, s2d[2] + 10*rng.Float64(), sin, cos, s2d[5] + 10*rng.Float64()}
		case 2: // off the pixel grid
			s2d[2] += rng.Float64()
			s2d[5] += rng.Float64()
		case 3: // scaled, up or down
			k := 0.3 + 2*rng.Float64()
			s2d[0], s2d[4] = k, k
		}
		opts := &draw.Options{SrcMask: mask, SrcMaskP: mp}

		want := image.NewRGBA(base.Rect)
		copy(want.Pix, base.Pix)
		draw.BiLinear.Transform(want, s2d, src, sr, draw.Over, opts)
		got := image.NewRGBA(base.Rect)
		copy(got.Pix, base.Pix)
		if !drawGlyph(got, s2d, src, sr, draw.Over, opts) {
			t.Fatalf("case %d: the glyph took the general path", i)
		}
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("case %d (%v at %v, mask %v at %v, colour %v): pixels differ from bilinear", i, sr, s2d, mask.Rect, mp, c)
		}
	}
}

// TestGlyphsLeaveTheRestToBilinear checks what the glyph paths refuse.
func TestGlyphsLeaveTheRestToBilinear(t *testing.T) {
	dst := image.NewRGBA(image.Rect(0, 0, 10, 10))
	mask := image.NewAlpha(image.Rect(0, 0, 4, 4))
	src := image.NewUniform(color.Black)
	opts := &draw.Options{SrcMask: mask}
	at := f64.Aff3{1, 0, 1, 0, 1, 1}
	if drawGlyph(dst, at, image.NewRGBA(mask.Rect), mask.Rect, draw.Over, opts) {
		t.Error("an image source: taken")
	}
	if drawGlyph(dst, at, src, mask.Rect, draw.Src, opts) {
		t.Error("draw.Src: taken")
	}
	if drawGlyph(dst, at, src, mask.Rect, draw.Over, &draw.Options{SrcMask: image.NewGray(mask.Rect)}) {
		t.Error("a grey mask: taken")
	}
	if drawGlyph(dst, at, src, mask.Rect, draw.Over, &draw.Options{SrcMask: mask, DstMask: mask}) {
		t.Error("a destination mask: taken")
	}
}

// TestChartsAsWithBilinear renders every sample, full size and at the
// size documents embed, with the glyph path and with bilinear alone: the
// same PNG bytes.
func TestChartsAsWithBilinear(t *testing.T) {
	for i, sm := range samples {
		for _, scale := range []float64{1, EmbedScale} {
			spec := sampleSpec(t, i)
			got, err := RenderScaled(context.Background(), sm.title, spec, scale)
			if err != nil {
				t.Fatal(err)
			}
			interp = bilinear
			want, err := RenderScaled(context.Background(), sm.title, spec, scale)
			interp = glyphInterp{}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s at %v: %d bytes, %d with bilinear", sm.name, scale, len(got), len(want))
			}
		}
	}
}
