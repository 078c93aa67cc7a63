package pdf

import (
	"bytes"
	"image"
	"image/color"
)

// Where a picture taller than a page is cut. A diagram laid out top to
// bottom has bands of background between its ranks of nodes, crossed
// only by the thin lines of its edges; a cut there leaves every node and
// label whole on one page. The rows with the least ink (pixels other than
// the background) near the page's end are that band: a row through a
// node crosses its fill, a row through a label its letters.

const (
	// cutReach is how far above where the page ends a cut may move, as a
	// fraction of the part on that page: further, and the page would be
	// left too empty for the picture it ends.
	cutReach = 0.25
	// cutTolerance is how far, in 8-bit levels of any channel, a pixel
	// may differ from the background and still count as background
	// (anti-aliasing, compression noise).
	cutTolerance = 6
)

// inkRows counts for each row of element id's picture the pixels that
// are not background, the colour of its top left pixel; nil when the
// picture cannot be decoded.
func (r *renderer) inkRows(id string) []int {
	img, _, err := image.Decode(bytes.NewReader(r.doc.Elements[id].PNG))
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
			if !near(color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA), bg) {
				ink++
			}
		}
		rows[y-b.Min.Y] = ink
	}
	return rows
}

func near(c, bg color.NRGBA) bool {
	if c.A == 0 && bg.A == 0 {
		return true
	}
	d := func(a, b uint8) bool { return int(a)-int(b) <= cutTolerance && int(b)-int(a) <= cutTolerance }
	return d(c.R, bg.R) && d(c.G, bg.G) && d(c.B, bg.B) && d(c.A, bg.A)
}

// cutAbove returns how much of a picture drawn h points tall goes on a
// page that shows it from done on and has room for part: part itself,
// or less, so that the cut falls in the middle of the lowest band of
// least-inked rows (ink, by inkRows) within cutReach of part above the
// page's end.
func cutAbove(ink []int, h, done, part float64) float64 {
	if len(ink) == 0 || h <= 0 {
		return part
	}
	perPt := float64(len(ink)) / h
	end := min(int((done+part)*perPt), len(ink)) // first row of the next page
	limit := max(int((done+part*(1-cutReach))*perPt), 0)
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
	if cut := mid/perPt - done; cut > 0 && cut <= part {
		return cut
	}
	return part
}
