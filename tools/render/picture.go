package render

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	_ "image/jpeg" // pictures embedded in documents may be JPEG
	_ "image/png"
)

// Reading pictures that documents embed: the density a PNG records, and
// where a picture taller than a page is best cut.

// MinReadableScale is the least fraction of its own size (its pixels at
// the density it records) at which a document draws a picture: a
// diagram's 14 pt labels stay 7 pt, its 11 pt edge labels 5.5 pt. A
// picture taller than a page at that size is cut over several pages
// rather than shrunk further.
const MinReadableScale = 0.5

// CutReach is how far above where a page ends a cut through a tall
// picture may move, as a fraction of the part on that page: further, and
// the page would be left too empty.
const CutReach = 0.25

// PNGDensity is the density a PNG records in its pHYs chunk, in pixels
// per inch, or 0 when it records none (or only an aspect).
func PNGDensity(data []byte) float64 {
	const sig = 8
	for rest := data[min(sig, len(data)):]; len(rest) >= 12; {
		n := binary.BigEndian.Uint32(rest)
		if uint64(n)+12 > uint64(len(rest)) {
			return 0
		}
		switch string(rest[4:8]) {
		case "pHYs":
			if n != 9 || rest[16] != 1 { // unit: metre
				return 0
			}
			x, y := binary.BigEndian.Uint32(rest[8:]), binary.BigEndian.Uint32(rest[12:])
			if x == 0 || x != y {
				return 0
			}
			return float64(x) * 0.0254
		case "IDAT", "IEND":
			return 0
		}
		rest = rest[12+n:]
	}
	return 0
}

// A diagram laid out top to bottom has bands of background between its
// ranks of nodes, crossed only by the thin lines of its edges; a cut
// there leaves every node and label whole on one page. The rows with the
// least ink (pixels other than the background) near the page's end are
// that band: a row through a node crosses its fill, a row through a
// label its letters.

// inkTolerance is how far, in 8-bit levels of any channel, a pixel may
// differ from the background and still count as background
// (anti-aliasing, compression noise).
const inkTolerance = 6

// InkRows counts for each row of the picture the pixels that are not
// background, the colour of its top left pixel; nil when the picture
// cannot be decoded.
func InkRows(data []byte) []int {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	b := img.Bounds()
	if b.Empty() {
		return nil
	}
	bg := color.NRGBAModel.Convert(img.At(b.Min.X, b.Min.Y)).(color.NRGBA)
	rows := make([]int, b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		ink := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if !nearColour(color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA), bg) {
				ink++
			}
		}
		rows[y-b.Min.Y] = ink
	}
	return rows
}

func nearColour(c, bg color.NRGBA) bool {
	if c.A == 0 && bg.A == 0 {
		return true
	}
	d := func(a, b uint8) bool { return int(a)-int(b) <= inkTolerance && int(b)-int(a) <= inkTolerance }
	return d(c.R, bg.R) && d(c.G, bg.G) && d(c.B, bg.B) && d(c.A, bg.A)
}

// CutAbove returns how much of a picture drawn h units tall goes on a
// page that shows it from done on and has room for part: part itself,
// or less, so that the cut falls in the middle of the lowest band of
// least-inked rows (ink, by InkRows) within CutReach of part above the
// page's end.
func CutAbove(ink []int, h, done, part float64) float64 {
	if len(ink) == 0 || h <= 0 {
		return part
	}
	perUnit := float64(len(ink)) / h
	end := min(int((done+part)*perUnit), len(ink)) // first row of the next page
	limit := max(int((done+part*(1-CutReach))*perUnit), 0)
	if end-limit < 2 {
		return part
	}
	least := ink[end-1]
	for _, n := range ink[limit:end] {
		least = min(least, n)
	}
	lo := end - 1
	for ink[lo] != least {
		lo--
	}
	hi := lo
	for hi-1 >= limit && ink[hi-1] == least {
		hi--
	}
	if lo == end-1 && end < len(ink) && ink[end] == least {
		return part // the band goes on below: the page's end is in it
	}
	mid := float64(hi+lo+1) / 2 // between rows hi and lo, in the middle
	if cut := mid/perUnit - done; cut > 0 && cut <= part {
		return cut
	}
	return part
}
