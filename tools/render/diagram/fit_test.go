package diagram

import (
	"context"
	"math"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
)

// RenderFit draws the same picture as Render with fewer pixels when
// Render's would exceed the bounds, and leaves a picture within them as
// it is.
func TestRenderFitBoundsEachSide(t *testing.T) {
	wide := Diagram{Source: `digraph { a -> b -> c -> d -> e -> f -> g; a -> x -> g }`, Aspect: render.AspectLandscape}
	tall := Diagram{Source: `digraph { a -> b -> c -> d -> e -> f -> g; a -> x -> g }`, Aspect: render.AspectPortrait}
	small := Diagram{Source: `digraph { a -> b }`}
	taller := Diagram{Source: `digraph { a -> b -> c -> d -> e -> f -> g -> h -> i -> j -> k -> l }`, Aspect: render.AspectPortrait}
	for _, tc := range []struct {
		name string
		d    Diagram
	}{{"wide", wide}, {"tall", tall}, {"small", small}, {"taller than a page", taller}} {
		t.Run(tc.name, func(t *testing.T) {
			full := decode(t, mustRender(t, tc.d, 0, 0)).Bounds().Size()
			const maxW, maxH = 400, 500
			got := decode(t, mustRender(t, tc.d, maxW, maxH)).Bounds().Size()
			// Render draws at Scale pixels a point; the height bound
			// stops at minFitScale.
			if got.X > maxW || got.Y > max(maxH, int(float64(full.Y)*minFitScale/Scale)+1) {
				t.Fatalf("%v is over %dx%d", got, maxW, maxH)
			}
			if full.X <= maxW && full.Y <= maxH && got != full {
				t.Errorf("a picture within the bounds changed: %v, was %v", got, full)
			}
			if a, b := float64(got.X)/float64(got.Y), float64(full.X)/float64(full.Y); math.Abs(a/b-1) > 0.02 {
				t.Errorf("aspect %.3f, Render's %.3f", a, b)
			}
			// The height in pixels at minFitScale; a bound is met to the
			// pixel it was floored to.
			least := int(float64(full.Y) * minFitScale / Scale)
			widthAllows := float64(full.X)*minFitScale/Scale <= maxW
			if widthAllows && got.Y < least-1 {
				t.Errorf("%v is below %v pixels a point (Render's %v)", got, minFitScale, full)
			}
			if got.X < maxW-1 && got.Y < maxH-1 && got.Y < least-1 && got != full {
				t.Errorf("%v neither fills a bound nor is Render's %v", got, full)
			}
			if tc.name == "taller than a page" && got.Y <= maxH {
				t.Errorf("%v: the height bound was not tested against minFitScale (Render's %v)", got, full)
			}
		})
	}
}

func mustRender(t *testing.T, d Diagram, w, h int) []byte {
	t.Helper()
	var out []byte
	var err error
	if w == 0 {
		out, err = Render(context.Background(), d)
	} else {
		out, err = RenderFit(context.Background(), d, w, h)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}
