package chart

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	xdraw "golang.org/x/image/draw"
)

var update = flag.Bool("update", false, "rewrite the preview PNGs in testdata")

// previewed are the samples whose small previews are kept in testdata, so
// that a change in how charts look shows in review.
var previewed = []string{"grouped-bar", "dark-line", "pie"}

// preview renders a sample and scales it to 640 pixels wide.
func preview(t *testing.T, name string) *image.RGBA {
	t.Helper()
	for i, sm := range samples {
		if sm.name != name {
			continue
		}
		data, err := Render(context.Background(), sm.title, sampleSpec(t, i))
		if err != nil {
			t.Fatal(err)
		}
		full := decode(t, data)
		b := full.Bounds()
		small := image.NewRGBA(image.Rect(0, 0, 640, 640*b.Dy()/b.Dx()))
		xdraw.CatmullRom.Scale(small, small.Bounds(), full, b, xdraw.Src, nil)
		return small
	}
	t.Fatalf("no sample %s", name)
	return nil
}

// TestPreviewsAreCurrent checks that the previews in testdata still show
// what Render draws; run with -update to rewrite them after a deliberate
// change, and look at them.
func TestPreviewsAreCurrent(t *testing.T) {
	for _, name := range previewed {
		t.Run(name, func(t *testing.T) {
			got := preview(t, name)
			path := filepath.Join("testdata", name+".png")
			if *update {
				var buf bytes.Buffer
				if err := png.Encode(&buf, got); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestPreviewsAreCurrent -update)", err)
			}
			want := decode(t, data)
			if want.Bounds() != got.Bounds() {
				t.Fatalf("preview is %v, render is %v", want.Bounds(), got.Bounds())
			}
			// Mean difference per channel, tolerant of rounding but not of
			// anything a reader would notice.
			var diff, n float64
			b := got.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					g, w := nrgba(got.At(x, y)), nrgba(want.At(x, y))
					diff += absDiff(g.R, w.R) + absDiff(g.G, w.G) + absDiff(g.B, w.B)
					n += 3
				}
			}
			if mean := diff / n; mean > 0.5 {
				t.Errorf("render differs from testdata/%s.png by %.2f per channel on average; look at it and run with -update", name, mean)
			}
		})
	}
}

func absDiff(a, b uint8) float64 {
	if a > b {
		return float64(a - b)
	}
	return float64(b - a)
}
