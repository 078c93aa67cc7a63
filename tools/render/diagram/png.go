package diagram

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"math"

	"github.com/switchyardhq/switchyard/tools/render/pngw"
)

// encodePNG encodes img as an 8-bit RGB PNG (RGBA when any pixel is not
// opaque) and records its density (scale pixels per point) in a pHYs
// chunk, so that word processors and PDF tools that honour it place the
// image at its intended size rather than at twice it.
//
// image/png tries all five row filters on every row, which costs more
// than the drawing on a large diagram. Diagrams are mostly flat colour,
// where the Sub and Up filters do nearly all the work: this encoder picks
// the better of those two per row, for files of about the same size in a
// fraction of the time; deflate is klauspost/compress's, about twice as
// fast as the standard library's at the fastest level.
func encodePNG(img *image.RGBA, scale float64) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	opaque := img.Opaque()
	bpp := 4
	colorType := pngw.RGBA
	if opaque {
		bpp, colorType = 3, pngw.RGB
	}

	// A diagram is mostly background: it compresses to a few per cent
	// of its raw pixels.
	enc := pngw.New(w, h, colorType, (bpp*w+1)*h/32)
	ppm := uint32(math.Round(scale * 72 / 0.0254))
	var phys [9]byte
	binary.BigEndian.PutUint32(phys[0:], ppm)
	binary.BigEndian.PutUint32(phys[4:], ppm)
	phys[8] = 1 // unit: metre
	enc.Chunk("pHYs", phys[:])

	n := w * bpp
	prev := make([]byte, n) // the row above the first is zero
	cur := make([]byte, n)
	sub := make([]byte, n+1)
	up := make([]byte, n+1)
	sub[0], up[0] = 1, 2 // filter types
	var above []byte     // the RGBA row above
	for y := 0; y < h; y++ {
		row := img.Pix[(y)*img.Stride : (y)*img.Stride+w*4]
		if y > 0 && bytes.Equal(row, above) {
			// Most rows of a diagram repeat the one above (the space
			// between nodes, straight edges): Up filters them to zeros,
			// which the choice below takes unless Sub's sum is zero too,
			// as it is only for a row of zeros. The same line, without
			// filtering it.
			line := up
			if allZero(prev) {
				line = sub
			}
			clear(line[1:])
			if err := enc.Row(line); err != nil {
				return nil, fmt.Errorf("encoding png: %w", err)
			}
			continue
		}
		above = row
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
			return nil, fmt.Errorf("encoding png: %w", err)
		}
		prev, cur = cur, prev
	}
	png, err := enc.Bytes()
	if err != nil {
		return nil, fmt.Errorf("encoding png: %w", err)
	}
	return png, nil
}

func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// filterRow writes the Sub and Up filterings of cur (prev is the row
// above) and returns how large each came out.
func filterRow(sub, up, cur, prev []byte, bpp int) (sumSub, sumUp int) {
	for i := 0; i < bpp; i++ {
		sub[i], up[i] = cur[i], cur[i]-prev[i]
		sumSub += absByte(sub[i])
		sumUp += absByte(up[i])
	}
	for i := bpp; i < len(cur); i++ {
		s, u := cur[i]-cur[i-bpp], cur[i]-prev[i]
		sub[i], up[i] = s, u
		sumSub += absByte(s)
		sumUp += absByte(u)
	}
	return sumSub, sumUp
}

// absByte is the magnitude of a filtered byte read as a signed value, the
// usual measure of how well a row filter did.
func absByte(b byte) int {
	v := int(int8(b))
	m := v >> 31
	return (v ^ m) - m
}

// unpremultiply converts a row of premultiplied RGBA pixels to the
// straight alpha PNG stores.
func unpremultiply(dst, src []byte) {
	for i := 0; i < len(src); i += 4 {
		a := src[i+3]
		switch a {
		case 0:
			dst[i], dst[i+1], dst[i+2], dst[i+3] = 0, 0, 0, 0
		case 0xFF:
			copy(dst[i:i+4], src[i:i+4])
		default:
			for k := 0; k < 3; k++ {
				dst[i+k] = uint8(min(255, (int(src[i+k])*255+int(a)/2)/int(a)))
			}
			dst[i+3] = a
		}
	}
}
