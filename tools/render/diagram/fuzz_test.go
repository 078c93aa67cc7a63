package diagram

import (
	"bytes"
	"context"
	"image/png"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/tools/render/rendertest"
)

// FuzzRender feeds arbitrary sources through the whole renderer. It
// checks that bad input only ever gives a *render.SourceError, that good
// input gives a decodable PNG within the size limits, and that no input
// changes how the next diagram renders (Graphviz's parser is shared by
// every call). The canvas is kept small: painting and encoding large
// images only slows the search down.
func FuzzRender(f *testing.F) {
	lim := canvasLimit{pixels: 1 << 20, side: 2048}
	for _, s := range samples {
		f.Add(sample(f, s.name).Source)
	}
	for _, s := range []string{
		"digraph { a -> }",
		"graph { a -- b } graph { c }",
		"digraph { a [label=\"open] }",
		"digraph { a [label=<<b>x</i>>] }",
		"strict digraph { rankdir=LR; a -> b -> a; subgraph cluster_x { label=<<i>x</i>>; c } }",
		"digraph { a [shape=record label=\"{<p>left|{mid|right}}\"]; a:p -> b:n }",
		"digraph { layout=neato; a -> b -> c -> a }",
		"digraph { node [style=\"filled,dashed\" fillcolor=\"red:blue\"]; a -> b [dir=both arrowtail=odiamond] }",
		"/* c */ # pre\ndigraph \"x\\\"y\" { \"a{\" -> \"b}\" // }\n }",
	} {
		f.Add(s)
	}
	good := Diagram{Source: "digraph { x -> y -> z }"}
	want, err := renderWithin(context.Background(), good, lim)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := renderWithin(ctx, Diagram{Source: src}, lim)
		if err != nil {
			rendertest.SourceError(t, err)
		} else {
			cfg, err := png.DecodeConfig(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%q: output is not a PNG: %v", src, err)
			}
			if cfg.Width > lim.side || cfg.Height > lim.side || cfg.Width*cfg.Height > lim.pixels {
				t.Fatalf("%q: %dx%d over the limits", src, cfg.Width, cfg.Height)
			}
		}
		got, err := renderWithin(context.Background(), good, lim)
		if err != nil {
			t.Fatalf("after %q: %v", src, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("after %q the same graph renders differently", src)
		}
	})
}
