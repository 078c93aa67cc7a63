package chart

import (
	"context"
	"image"
	"testing"

	xdraw "golang.org/x/image/draw"
)

// A chart drawn for a document at EmbedScale is the same picture with
// fewer pixels: shrunk to a thumbnail, it matches the full-size chart's
// thumbnail far more closely than another chart's does.
func TestEmbedScaleKeepsTheLayout(t *testing.T) {
	spec := mustParse(t, `{"type":"bar","x_label":"Quarter","y_label":"Revenue","labels":["Q1","Q2","Q3","Q4"],`+
		`"series":[{"name":"2025","values":[120,135,150,171]},{"name":"2026","values":[131,149,160,190]}]}`)
	other := mustParse(t, `{"type":"bar","x_label":"Quarter","y_label":"Revenue","labels":["Q1","Q2","Q3","Q4"],`+
		`"series":[{"name":"2025","values":[190,60,150,20]},{"name":"2026","values":[31,149,60,190]}]}`)
	ctx := context.Background()
	full, err := Render(ctx, "Revenue by quarter", spec)
	if err != nil {
		t.Fatal(err)
	}
	small, err := RenderScaled(ctx, "Revenue by quarter", spec, EmbedScale)
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := RenderScaled(ctx, "Revenue by quarter", other, EmbedScale)
	if err != nil {
		t.Fatal(err)
	}
	if b := decode(t, small).Bounds(); b.Dx() != 1000 || b.Dy() != 625 {
		t.Fatalf("the embedded chart is %v, want 1000×625", b.Size())
	}
	want := thumbnail(decode(t, full))
	same, differs := meanDiff(want, thumbnail(decode(t, small))), meanDiff(want, thumbnail(decode(t, wrong)))
	t.Logf("mean difference: same chart %.2f, another %.2f", same, differs)
	if same > 2 || same*4 > differs {
		t.Errorf("the scaled chart is not the same picture: mean difference %.2f (another chart: %.2f)", same, differs)
	}
}

func thumbnail(img image.Image) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, 200, 125))
	xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, img.Bounds(), xdraw.Src, nil)
	return dst
}

// meanDiff is the mean absolute difference of two pictures' channels.
func meanDiff(a, b *image.RGBA) float64 {
	var sum int
	for i := range a.Pix {
		d := int(a.Pix[i]) - int(b.Pix[i])
		sum += max(d, -d)
	}
	return float64(sum) / float64(len(a.Pix))
}

func mustParse(t *testing.T, spec string) Spec {
	t.Helper()
	s, err := Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
