package rendertest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// Stripes is a w×h PNG drawn like a tall diagram: a grey edge down the
// middle and, every period rows, a node node rows tall; inNode tells the
// rows a node covers, where a cut must not fall.
func Stripes(t testing.TB, w, h, period, node int) (data []byte, inNode func(row int) bool) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	inNode = func(y int) bool { return y%period >= (period-node)/2 && y%period < (period+node)/2 }
	for y := range h {
		for x := range w {
			c := color.RGBA{255, 255, 255, 255}
			switch {
			case inNode(y) && x > w/5 && x < 4*w/5:
				c = color.RGBA{200, 220, 245, 255}
			case x >= w/2-1 && x <= w/2+1:
				c = color.RGBA{80, 80, 80, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), inNode
}
