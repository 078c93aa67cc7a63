package chart

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
)

func decode(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

func nrgba(c color.Color) color.NRGBA {
	return color.NRGBAModel.Convert(c).(color.NRGBA)
}

// countColor counts the pixels of exactly c inside r.
func countColor(img image.Image, r image.Rectangle, c color.NRGBA) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if nrgba(img.At(x, y)) == c {
				n++
			}
		}
	}
	return n
}

func TestRenderDrawsEachSample(t *testing.T) {
	for i, sm := range samples {
		t.Run(sm.name, func(t *testing.T) {
			s := sampleSpec(t, i)
			data, err := Render(context.Background(), sm.title, s)
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, data)
			w, h := pixels(s.Aspect)
			if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
				t.Fatalf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
			}
			th := themeFor(s.Theme)
			if got := nrgba(img.At(2, 2)); got != th.background {
				t.Errorf("corner pixel %v, want the theme background %v", got, th.background)
			}
			// Every series (or pie slice) shows in its own palette colour,
			// as solid area somewhere in the picture.
			shown := len(s.Series)
			if s.Type == TypePie {
				shown = len(s.Labels)
			}
			for k := 0; k < shown; k++ {
				want := th.color(k)
				if s.Type == TypeArea && s.Stacked {
					want = blend(want, th.background, 0.8)
				}
				if n := countColor(img, img.Bounds(), want); n < 50 {
					t.Errorf("series %d colour %v covers %d pixels, want a visible area", k, want, n)
				}
			}
			// Text and rules are drawn: the picture is more than the data.
			if n := countColor(img, img.Bounds(), th.background); n > w*h*97/100 || n < w*h/10 {
				t.Errorf("background covers %d of %d pixels", n, w*h)
			}
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	for i, sm := range samples {
		a, err := Render(context.Background(), sm.title, sampleSpec(t, i))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Render(context.Background(), sm.title, sampleSpec(t, i))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renders of the same spec differ", sm.name)
		}
	}
}

// Renders share fonts and glyph tables; running them side by side must
// neither race nor change a byte.
func TestRenderConcurrently(t *testing.T) {
	want := make([][]byte, len(samples))
	for i, sm := range samples {
		var err error
		if want[i], err = Render(context.Background(), sm.title, sampleSpec(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	got := make([][]byte, len(samples))
	for i, sm := range samples {
		s := sampleSpec(t, i)
		wg.Go(func() { got[i], _ = Render(context.Background(), sm.title, s) })
	}
	wg.Wait()
	for i := range samples {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%s: concurrent render differs", samples[i].name)
		}
	}
}

func TestDarkThemeIsDark(t *testing.T) {
	spec := `{"type":"bar","labels":["a","b"],"series":[{"name":"x","values":[1,2]}]}`
	for _, tt := range []struct {
		name  string
		theme string
		dark  bool
	}{
		{"default", "", false},
		{"light", `"theme":"light",`, false},
		{"dark", `"theme":"dark",`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(`{` + tt.theme + spec[1:]))
			if err != nil {
				t.Fatal(err)
			}
			data, err := Render(context.Background(), "Theme", s)
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, data)
			var sum, n float64
			b := img.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y += 7 {
				for x := b.Min.X; x < b.Max.X; x += 7 {
					c := nrgba(img.At(x, y))
					sum += 0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)
					n++
				}
			}
			if mean := sum / n; (mean < 80) != tt.dark {
				t.Errorf("mean luminance %.0f; dark = %v", mean, tt.dark)
			}
		})
	}
}

func TestLegendOnlyWithSeveralSeries(t *testing.T) {
	// The data rise to the right, leaving the top left, where a legend
	// goes, to the title and the legend.
	one := `{"type":"line","labels":["a","b","c"],"series":[{"name":"Only","values":[1,2,3]}]}`
	two := `{"type":"line","labels":["a","b","c"],"series":[{"name":"First","values":[1,2,3]},{"name":"Second","values":[0,1,3]}]}`
	for _, tt := range []struct {
		name   string
		spec   string
		legend bool
	}{
		{"one series", one, false},
		{"two series", two, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			if got := showLegend(&s); got != tt.legend {
				t.Errorf("showLegend = %v, want %v", got, tt.legend)
			}
			data, err := Render(context.Background(), "Legend", s)
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, data)
			band := image.Rect(0, 0, img.Bounds().Dx()*2/5, 160)
			n := countColor(img, band, lightTheme.color(0))
			if (n > 0) != tt.legend {
				t.Errorf("%d pixels of the first series colour above the plot; legend wanted: %v", n, tt.legend)
			}
		})
	}
}

func TestRenderAspects(t *testing.T) {
	for _, tt := range []struct {
		aspect string
		w, h   int
	}{
		{"", 1600, 1000},
		{render.AspectLandscape, 1600, 1000},
		{render.AspectPortrait, 1000, 1500},
		{render.AspectSquare, 1200, 1200},
	} {
		t.Run(tt.aspect, func(t *testing.T) {
			s := Spec{Type: TypePie, Aspect: tt.aspect, Labels: []string{"a", "b"}, Series: []Series{{Values: []float64{1, 2}}}}
			data, err := Render(context.Background(), "Aspect", s)
			if err != nil {
				t.Fatal(err)
			}
			if b := decode(t, data).Bounds(); b.Dx() != tt.w || b.Dy() != tt.h {
				t.Errorf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tt.w, tt.h)
			}
		})
	}
}

func TestRenderStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, "Cancelled", sampleSpec(t, 0))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Render error = %v, want context.Canceled", err)
	}
}

func TestRenderChecksTheSpec(t *testing.T) {
	_, err := Render(context.Background(), "Bad", Spec{Type: TypeBar, Labels: []string{"a"}, Series: []Series{{Values: []float64{1, 2}}}})
	var se *render.SourceError
	if !errors.As(err, &se) {
		t.Errorf("Render error = %v, want a *render.SourceError", err)
	}
}

// Shapes the samples do not cover: extremes of size and value.
func TestRenderEdgeCases(t *testing.T) {
	many := make([]string, MaxLabels)
	vals := make([]float64, MaxLabels)
	for i := range many {
		many[i] = "Category label " + itoa(i)
		vals[i] = float64(i % 37)
	}
	var series []Series
	for i := 0; i < MaxSeries; i++ {
		series = append(series, Series{Name: "Series " + itoa(i), Values: []float64{1, float64(i), 3}})
	}
	tests := []struct {
		name string
		spec Spec
	}{
		{"a thousand bars", Spec{Type: TypeBar, Labels: many, Series: []Series{{Name: "n", Values: vals}}}},
		{"a thousand stacked area points", Spec{Type: TypeArea, Stacked: true, Labels: many, Series: []Series{{Name: "a", Values: vals}, {Name: "b", Values: vals}}}},
		{"fifty series", Spec{Type: TypeLine, Labels: []string{"a", "b", "c"}, Series: series}},
		{"one category", Spec{Type: TypeArea, Labels: []string{"Only"}, Series: []Series{{Name: "a", Values: []float64{3}}}}},
		{"all zero", Spec{Type: TypeBar, Labels: []string{"a", "b"}, Series: []Series{{Name: "a", Values: []float64{0, 0}}}}},
		{"huge values", Spec{Type: TypeBar, Labels: []string{"a", "b"}, Series: []Series{{Name: "a", Values: []float64{1e100, -1e100}}}}},
		{"huge stacks", Spec{Type: TypeBar, Stacked: true, Labels: []string{"a"}, Series: []Series{{Name: "a", Values: []float64{1e100}}, {Name: "b", Values: []float64{1e100}}}}},
		{"flat huge values", Spec{Type: TypeLine, Labels: []string{"a", "b"}, Series: []Series{{Name: "a", Values: []float64{-1e100, -1e100}}}}},
		{"tiny values", Spec{Type: TypeLine, Labels: []string{"a", "b"}, Series: []Series{{Name: "a", Values: []float64{1e-300, 2e-300}}}}},
		{"denormal values", Spec{Type: TypeLine, Labels: []string{"a", "b"}, Series: []Series{{Name: "a", Values: []float64{5e-324, 0}}}}},
		{"scatter over the whole range", Spec{Type: TypeScatter, Series: []Series{{Name: "a", Points: [][]float64{{-1e100, 1e100}, {1e100, -1e100}}}}}},
		{"scatter of denormals", Spec{Type: TypeScatter, Series: []Series{{Name: "a", Points: [][]float64{{5e-324, 0}, {0, 5e-324}}}}}},
		{"pie of many slices", Spec{Type: TypePie, Labels: many[:40], Series: []Series{{Values: vals[1:41]}}}},
		{"text the font lacks", Spec{Type: TypeBar, XLabel: "😀\n\t", Labels: []string{"東京", "\u200d"}, Series: []Series{{Name: "a", Values: []float64{1, 2}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Render(context.Background(), tt.name, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if b := decode(t, data).Bounds(); b.Dx() != 1600 || b.Dy() != 1000 {
				t.Errorf("size %v", b)
			}
		})
	}
}

func BenchmarkRender(b *testing.B) {
	for i, sm := range samples {
		s := sampleSpec(b, i)
		b.Run(sm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(context.Background(), sm.title, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderAtLimits renders specs as large as Parse allows, to show
// the worst case stays bounded.
func BenchmarkRenderAtLimits(b *testing.B) {
	labels := make([]string, MaxLabels)
	vals := make([]float64, MaxLabels)
	for i := range labels {
		labels[i] = strings.Repeat("Wé", MaxLabelRunes/2)
		vals[i] = float64(i % 37)
	}
	series := make([]Series, MaxSeries)
	for i := range series {
		series[i] = Series{Name: strings.Repeat("n", MaxLabelRunes), Values: vals}
	}
	points := make([][]float64, MaxPoints)
	for i := range points {
		points[i] = []float64{float64(i), float64(i * i % 1000)}
	}
	for _, tt := range []struct {
		name string
		spec Spec
	}{
		{"bar", Spec{Type: TypeBar, Labels: labels, Series: series}},
		{"stacked-area", Spec{Type: TypeArea, Stacked: true, Labels: labels, Series: series}},
		{"scatter", Spec{Type: TypeScatter, Series: []Series{{Name: "p", Points: points}}}},
		{"pie", Spec{Type: TypePie, Labels: labels, Series: []Series{{Values: vals}}}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(context.Background(), strings.Repeat("T", 300), tt.spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
