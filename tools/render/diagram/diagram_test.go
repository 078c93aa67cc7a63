package diagram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

func decode(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("output is not a PNG: %v", err)
	}
	return img
}

func nrgba(img image.Image, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

func near(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) int { return int(x) - int(y) }
	abs := func(v int) int {
		if v < 0 {
			return -v
		}
		return v
	}
	return abs(d(a.R, b.R)) <= tol && abs(d(a.G, b.G)) <= tol && abs(d(a.B, b.B)) <= tol
}

func TestRenderSamples(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			out, err := Render(context.Background(), sample(t, s.name))
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, out)
			b := img.Bounds()
			if b.Dx() < 300 || b.Dy() < 200 || b.Dx() > MaxSide || b.Dy() > MaxSide {
				t.Fatalf("size %dx%d, want a readable picture within %d px", b.Dx(), b.Dy(), MaxSide)
			}
			bg := nrgba(img, 0, 0)
			th := lightTheme
			if s.theme == render.ThemeDark {
				th = darkTheme
			}
			if !near(bg, parseColor(th.background), 0) {
				t.Errorf("background %v, want the theme's %s", bg, th.background)
			}
			// Non-trivial content: a good share of pixels differ from the
			// background, among them the node fill and border colours.
			var drawn, fill, border int
			for y := b.Min.Y; y < b.Max.Y; y += 2 {
				for x := b.Min.X; x < b.Max.X; x += 2 {
					c := nrgba(img, x, y)
					if !near(c, bg, 8) {
						drawn++
					}
					if near(c, parseColor(th.nodeFill), 2) {
						fill++
					}
					if near(c, parseColor(th.nodeBorder), 24) {
						border++
					}
				}
			}
			total := (b.Dx() / 2) * (b.Dy() / 2)
			if drawn < total/20 {
				t.Errorf("only %d of %d sampled pixels are drawn", drawn, total)
			}
			if fill < total/100 || border < 50 {
				t.Errorf("node fill pixels %d, border pixels %d: nodes are not drawn in the theme's colours", fill, border)
			}
		})
	}
}

// TestSimpleGraphDrawn checks by pixels that both node boxes of a -> b
// and the edge between them are drawn where Graphviz placed them.
func TestSimpleGraphDrawn(t *testing.T) {
	d := Diagram{Source: "digraph { a -> b }"}
	out, err := Render(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, out)

	span, err := scanGraph(d.Source)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := layout(context.Background(), withDefaults(d.Source, span, defaultStatements(&lightTheme)), &lightTheme, render.AspectLandscape)
	if err != nil {
		t.Fatal(err)
	}
	f, err := frameFor(sc, render.AspectLandscape, canvasLimit{pixels: MaxPixels, side: MaxSide})
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != f.w || img.Bounds().Dy() != f.h {
		t.Fatalf("image %v, layout frame %dx%d", img.Bounds(), f.w, f.h)
	}
	if len(sc.nodes) != 2 {
		t.Fatalf("%d nodes laid out, want 2", len(sc.nodes))
	}
	// Each node's outline in pixels, from its drawing operations.
	var boxes [2]image.Rectangle
	for i, ops := range sc.nodes {
		minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, o := range ops {
			for _, p := range o.Points {
				x, y := f.offX+p[0]*f.scale, f.offY-p[1]*f.scale
				minX, maxX = min(minX, x), max(maxX, x)
				minY, maxY = min(minY, y), max(maxY, y)
			}
		}
		if math.IsInf(minX, 0) {
			t.Fatalf("node %d has no outline: %+v", i, ops)
		}
		boxes[i] = image.Rect(int(minX), int(minY), int(maxX), int(maxY))
	}
	a, b := boxes[0], boxes[1]
	if a.Min.X > b.Min.X {
		a, b = b, a
	}
	if a.Max.X >= b.Min.X {
		t.Fatalf("landscape layout should put the nodes side by side: %v %v", a, b)
	}
	fill, border := parseColor(lightTheme.nodeFill), parseColor(lightTheme.nodeBorder)
	for _, r := range []image.Rectangle{a, b} {
		cy := (r.Min.Y + r.Max.Y) / 2
		// The border crosses the centre line near both sides of the box.
		for _, x0 := range []int{r.Min.X, r.Max.X} {
			found := false
			for x := x0 - 3; x <= x0+3; x++ {
				if near(nrgba(img, x, cy), border, 40) {
					found = true
				}
			}
			if !found {
				t.Errorf("no border at x=%d y=%d of node box %v", x0, cy, r)
			}
		}
		// Inside, away from the label, is the fill.
		if c := nrgba(img, r.Min.X+6, cy); !near(c, fill, 2) {
			t.Errorf("fill inside node box %v is %v, want %v", r, c, fill)
		}
		// Outside is the background.
		if c := nrgba(img, r.Min.X+6, r.Min.Y-6); !near(c, color.NRGBA{255, 255, 255, 255}, 0) {
			t.Errorf("above node box %v is %v, want white", r, c)
		}
	}
	// The edge: dark pixels all along the centre line between the boxes.
	cy := (a.Min.Y + a.Max.Y + b.Min.Y + b.Max.Y) / 4
	dark, n := 0, 0
	for x := a.Max.X + 2; x < b.Min.X-2; x++ {
		n++
		for y := cy - 1; y <= cy+1; y++ {
			c := nrgba(img, x, y)
			if int(c.R)+int(c.G)+int(c.B) < 3*180 {
				dark++
				break
			}
		}
	}
	if n < 20 || dark < n*9/10 {
		t.Errorf("edge: %d of %d pixels between the nodes are dark", dark, n)
	}
}

func TestThemeSetsBackground(t *testing.T) {
	for _, tc := range []struct {
		name, theme string
		want        string
	}{
		{"default", "", lightTheme.background},
		{"light", render.ThemeLight, lightTheme.background},
		{"dark", render.ThemeDark, darkTheme.background},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Render(context.Background(), Diagram{Source: "digraph { a -> b }", Theme: tc.theme})
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, out)
			if c := nrgba(img, 1, 1); !near(c, parseColor(tc.want), 0) {
				t.Errorf("corner %v, want %s", c, tc.want)
			}
		})
	}
}

func TestAspectSetsOrientation(t *testing.T) {
	chain := "digraph { a -> b -> c -> d -> e }"
	for _, tc := range []struct {
		name, aspect, source string
		check                func(w, h int) bool
		want                 string
	}{
		{"landscape", render.AspectLandscape, chain, func(w, h int) bool { return w > 2*h }, "wider than tall"},
		{"default", "", chain, func(w, h int) bool { return w > 2*h }, "wider than tall"},
		{"portrait", render.AspectPortrait, chain, func(w, h int) bool { return h > 2*w }, "taller than wide"},
		{"square", render.AspectSquare, chain, func(w, h int) bool { return w == h }, "square"},
		{"source rankdir wins", render.AspectLandscape, "digraph { rankdir=TB; a -> b -> c -> d -> e }", func(w, h int) bool { return h > 2*w }, "taller than wide"},
		// A wide tree reads better top to bottom even in landscape.
		{"wide tree", render.AspectLandscape, "digraph { r -> {a b c d e f} }", func(w, h int) bool { return w > h }, "wider than tall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Render(context.Background(), Diagram{Source: tc.source, Aspect: tc.aspect})
			if err != nil {
				t.Fatal(err)
			}
			b := decode(t, out).Bounds()
			if !tc.check(b.Dx(), b.Dy()) {
				t.Errorf("%dx%d, want %s", b.Dx(), b.Dy(), tc.want)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	d := sample(t, "architecture")
	first, err := Render(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Render(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Error("the same diagram rendered to different bytes")
	}
}

// matrix is a dependency matrix of n nodes: node i depends on every
// third node after it, so most edges skip many ranks.
func matrix(n int) string {
	var b strings.Builder
	b.WriteString("digraph {")
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j += 3 {
			fmt.Fprintf(&b, " n%d -> n%d;", i, j)
		}
	}
	b.WriteString("}")
	return b.String()
}

func TestSkippedRanks(t *testing.T) {
	// arcs makes edges of least length 1, or of the length after a
	// negative entry (-3, 4: an edge to 4 of minlen 3).
	arcs := func(out [][]int) [][]arc {
		res := make([][]arc, len(out))
		for i, heads := range out {
			minlen := 1
			for _, h := range heads {
				if h < 0 {
					minlen = -h
					continue
				}
				res[i] = append(res[i], arc{to: h, minlen: minlen})
				minlen = 1
			}
		}
		return res
	}
	for _, tc := range []struct {
		name     string
		out      [][]int
		labelled bool
		want     int
	}{
		{"chain", [][]int{{1}, {2}, {}}, false, 0},
		{"shortcut", [][]int{{1, 2}, {2}, {}}, false, 1},
		{"long shortcut", [][]int{{1, 4}, {2}, {3}, {4}, {}}, false, 3},
		{"cycle", [][]int{{1}, {2}, {0}}, false, 1},
		{"disconnected", [][]int{{}, {}, {}}, false, 0},
		{"matrix", [][]int{{1, 2, 3}, {2, 3}, {3}, {}}, false, 1 + 2 + 1},
		{"minlen", [][]int{{-5, 1}, {}}, false, 4},
		{"minlen pushes the rest", [][]int{{-3, 1, 2}, {2}, {}}, false, 2 + 3},
		{"labelled chain", [][]int{{1}, {2}, {}}, true, 1 + 1},
		{"labelled shortcut", [][]int{{1, 2}, {2}, {}}, true, 1 + 3 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := skippedRanks(arcs(tc.out), tc.labelled); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	many := func(n int) string {
		var b strings.Builder
		b.WriteString("digraph {")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, " n%d;", i)
		}
		b.WriteString("}")
		return b.String()
	}
	for _, tc := range []struct {
		name string
		d    Diagram
		want string // in the message
	}{
		{"syntax error", Diagram{Source: "digraph {\n  a -> b\n  c -> \n}"}, "line 4"},
		{"missing brace", Diagram{Source: "digraph {\n a -> b\n"}, "not closed"},
		{"extra brace", Diagram{Source: "digraph { a }\n}"}, "line 2"},
		{"close before open", Diagram{Source: "} digraph { a }"}, "unexpected }"},
		{"two graphs", Diagram{Source: "digraph { a }\ndigraph { b }"}, "line 2"},
		{"trailing junk", Diagram{Source: "digraph { a } junk"}, "exactly one graph"},
		{"no graph", Diagram{Source: "a -> b"}, "no graph"},
		{"open string", Diagram{Source: "digraph { a [label=\"x] }"}, "quoted string"},
		{"open comment", Diagram{Source: "digraph { a } /* note"}, "comment"},
		{"empty", Diagram{Source: "  \n"}, "empty"},
		{"nul byte", Diagram{Source: "digraph { a\x00 }"}, "NUL"},
		{"too large", Diagram{Source: "digraph { " + strings.Repeat("a; ", MaxSourceBytes/3) + "}"}, "bytes"},
		{"too many nodes", Diagram{Source: many(MaxNodes + 1)}, "nodes"},
		{"nested too deeply", Diagram{Source: "digraph {" + strings.Repeat("subgraph cluster_a {", maxNesting) + "a" + strings.Repeat("}", maxNesting) + "}"}, "nested"},
		{"too many long edges", Diagram{Source: matrix(60)}, "too complex"},
		{"unknown language", Diagram{Source: "graph TD; A-->B", Language: "mermaid"}, `"dot"`},
		{"unknown theme", Diagram{Source: "digraph { a }", Theme: "sepia"}, "light"},
		{"unknown aspect", Diagram{Source: "digraph { a }", Aspect: "wide"}, "landscape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(context.Background(), tc.d)
			rendertest.SourceError(t, err, tc.want)
		})
	}
}

// TestBadSourceLeavesNoState checks that a failed or refused source does
// not change how the next one renders: Graphviz's parser is shared.
func TestBadSourceLeavesNoState(t *testing.T) {
	good := Diagram{Source: "digraph { x -> y -> z }"}
	want, err := Render(context.Background(), good)
	if err != nil {
		t.Fatal(err)
	}
	// Graphviz reports a bad HTML label but still draws the graph, with
	// the label as plain text; the others fail.
	for _, bad := range []string{
		"digraph { a -> }",
		"digraph { a [label=\"open] }",
		"digraph { a [label=<<b>x</i>>] }",
		"graph { a -- b } graph { c }",
		"digraph { subgraph { a } -> }",
	} {
		if _, err := Render(context.Background(), Diagram{Source: bad}); err == nil && !strings.Contains(bad, "<b>") {
			t.Errorf("%q rendered without error", bad)
		}
		got, err := Render(context.Background(), good)
		if err != nil {
			t.Fatalf("after %q: %v", bad, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("after %q the same graph renders differently", bad)
		}
	}
}

func TestSourceAttributesWin(t *testing.T) {
	out, err := Render(context.Background(), Diagram{Source: `digraph { node [fillcolor="#ff0000"]; a -> b }`})
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, out)
	red := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if near(nrgba(img, x, y), color.NRGBA{255, 0, 0, 255}, 0) {
				red++
			}
		}
	}
	if red < 1000 {
		t.Errorf("%d red pixels: the source's fillcolor did not win over the theme", red)
	}
}

func TestUnusualLabels(t *testing.T) {
	for _, tc := range []struct{ name, source string }{
		{"unicode", `digraph { a [label="Zürich → Ελλάδα"]; b [label="東京 🚀 office"]; a -> b [label="ünïcode"] }`},
		{"control characters", "digraph { a [label=\"tab\there\x05\"]; a -> b [label=\"raw\nnewline\"] }"},
		{"escapes", `digraph { a [label="quote \" and \\ backslash\lleft\rright"] }`},
		{"html", `digraph { a [shape=plaintext label=<<table><tr><td bgcolor="#ffd">x</td><td><b>bold</b></td></tr></table>>] }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Render(context.Background(), Diagram{Source: tc.source})
			if err != nil {
				t.Fatal(err)
			}
			decode(t, out)
		})
	}
}

func TestEscapeControls(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"clean", `{"a": "b\"c"}`, `{"a": "b\"c"}`},
		{"control in string", "{\"a\": \"x\x05y\"}", `{"a": "x\u0005y"}`},
		{"newline in string", "{\"a\": \"x\ny\"}", `{"a": "x\u000ay"}`},
		{"newline between tokens", "{\n\"a\": 1}", "{\n\"a\": 1}"},
		{"escaped quote", "{\"a\": \"q\\\"\x01\"}", `{"a": "q\"\u0001"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(escapeControls([]byte(tc.in))); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, sample(t, "flowchart"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestDensityRecorded(t *testing.T) {
	out, err := Render(context.Background(), Diagram{Source: "digraph { a -> b }"})
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(out, []byte("pHYs"))
	if i < 0 || i+13 > len(out) {
		t.Fatal("no pHYs chunk")
	}
	ppm := uint32(out[i+4])<<24 | uint32(out[i+5])<<16 | uint32(out[i+6])<<8 | uint32(out[i+7])
	if want := uint32(math.Round(Scale * 72 / 0.0254)); ppm != want {
		t.Errorf("density %d px/m, want %d", ppm, want)
	}
	decode(t, out) // the chunk's CRC holds
}

func BenchmarkRender50Nodes(b *testing.B) {
	d := sample(b, "fifty-nodes")
	if _, err := Render(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Render(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderFlowchart(b *testing.B) {
	d := sample(b, "flowchart")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Render(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
}
