package chart

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/pngw"
)

// TestPNGRepeatedRows checks the encoder against Up-filtering every row
// and against the standard decoder, on opaque pictures of bands of
// repeated rows.
func TestPNGRepeatedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 30 {
		w, h := 1+rng.IntN(50), 1+rng.IntN(70)
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		band := make([]byte, 4*w)
		for y := range h {
			if y == 0 || rng.IntN(4) == 0 {
				for j := range band {
					band[j] = byte(rng.IntN(3) * 127)
					if j%4 == 3 {
						band[j] = 255
					}
				}
			}
			copy(img.Pix[y*img.Stride:], band)
		}
		got, err := encodePNG(img)
		if err != nil {
			t.Fatal(err)
		}
		enc := pngw.New(w, h, pngw.RGB, 0)
		row := make([]byte, 1+3*w)
		row[0] = 2
		for y := range h {
			for x := range w {
				for c := range 3 {
					above := byte(0)
					if y > 0 {
						above = img.Pix[(y-1)*img.Stride+4*x+c]
					}
					row[1+3*x+c] = img.Pix[y*img.Stride+4*x+c] - above
				}
			}
			if err := enc.Row(row); err != nil {
				t.Fatal(err)
			}
		}
		want, err := enc.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("picture %d (%dx%d): %d bytes, want %d", i, w, h, len(got), len(want))
		}
		dec, err := png.Decode(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		for y := range h {
			for x := range w {
				if r, g, b, _ := dec.At(x, y).RGBA(); [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)} != [3]uint8(img.Pix[y*img.Stride+4*x:][:3]) {
					t.Fatalf("picture %d: pixel %d,%d decodes differently", i, x, y)
				}
			}
		}
	}
}
