package diagram

import (
	"bytes"
	"image"
	"math/rand/v2"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render/pngw"
)

// referencePNG is encodePNG filtering every row, repeated or not.
func referencePNG(t *testing.T, img *image.RGBA) []byte {
	t.Helper()
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	opaque := img.Opaque()
	bpp, colorType := 4, pngw.RGBA
	if opaque {
		bpp, colorType = 3, pngw.RGB
	}
	enc := pngw.New(w, h, colorType, 0)
	enc.Chunk("pHYs", []byte{0, 0, 0x0b, 0x13, 0, 0, 0x0b, 0x13, 1}) // 2,835 pixels a metre: 72 an inch
	n := w * bpp
	prev, cur := make([]byte, n), make([]byte, n)
	sub, up := make([]byte, n+1), make([]byte, n+1)
	sub[0], up[0] = 1, 2
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+w*4]
		if opaque {
			for x, j := 0, 0; x < len(row); x, j = x+4, j+3 {
				cur[j], cur[j+1], cur[j+2] = row[x], row[x+1], row[x+2]
			}
		} else {
			unpremultiply(cur, row)
		}
		sumSub, sumUp := filterRow(sub[1:], up[1:], cur, prev, bpp)
		line := sub
		if sumUp < sumSub {
			line = up
		}
		if err := enc.Row(line); err != nil {
			t.Fatal(err)
		}
		prev, cur = cur, prev
	}
	b, err := enc.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRepeatedRowsAsFiltered checks the encoder against filtering every
// row, on pictures of bands of repeated rows (white, black, zero,
// transparent, and noise), opaque and not.
func TestRepeatedRowsAsFiltered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for i := range 40 {
		w, h := 1+rng.IntN(60), 1+rng.IntN(80)
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		var band []byte
		for y := range h {
			if y == 0 || rng.IntN(5) == 0 {
				band = make([]byte, 4*w)
				switch rng.IntN(4) {
				case 0: // zeros: transparent black
				case 1:
					for j := range band {
						band[j] = 255
					}
				case 2:
					for j := 3; j < len(band); j += 4 {
						band[j] = 255 // opaque black
					}
				default:
					for j := 0; j < len(band); j += 4 {
						a := byte(255)
						if i%2 == 1 {
							a = byte(rng.IntN(256))
						}
						band[j], band[j+1], band[j+2], band[j+3] = byte(rng.IntN(int(a)+1)), byte(rng.IntN(int(a)+1)), byte(rng.IntN(int(a)+1)), a
					}
				}
			}
			copy(img.Pix[y*img.Stride:], band)
		}
		got, err := encodePNG(img, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := referencePNG(t, img); !bytes.Equal(got, want) {
			t.Fatalf("picture %d (%dx%d, opaque %v): %d bytes, want %d", i, w, h, img.Opaque(), len(got), len(want))
		}
	}
}
