package diagram

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-graphviz"
	"github.com/goccy/go-graphviz/cgraph"
)

// parsed parses src with Graphviz in this process, as the worker does,
// and applies the attribute bounds.
func parsed(t *testing.T, src string) *cgraph.Graph {
	t.Helper()
	g, err := graphviz.ParseBytes([]byte(src))
	if err != nil || g == nil {
		t.Fatalf("parsing: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	nodes, _ := g.NodeNum()
	edges, _ := g.EdgeNum()
	if err := restrictAttributes(g, nodes, edges); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestAttributesOutsideTheListAreDropped(t *testing.T) {
	g := parsed(t, `digraph {
		layout=neato; size="1,1"; ratio=compress; concentrate=true; remincross=true; maxiter=100000; imagepath="/etc";
		label="kept"; rankdir=LR;
		subgraph cluster_a { dpi=600; label="cluster kept"; a }
		node [image="/etc/passwd"];
		a [shapefile="/etc/shadow" samplepoints=100000 label="A"];
		b [pos="1,2!"];
		a -> b [comment="kept" _draw_="c 7 -#ff0000 E 0 0 1e9 1e9"];
	}`)
	for _, tc := range []struct {
		what, got, want string
	}{
		{"layout", g.GetStr("layout"), "dot"},
		{"size", g.GetStr("size"), ""},
		{"ratio", g.GetStr("ratio"), ""},
		{"concentrate", g.GetStr("concentrate"), ""},
		{"remincross", g.GetStr("remincross"), ""},
		{"maxiter", g.GetStr("maxiter"), ""},
		{"imagepath", g.GetStr("imagepath"), ""},
		{"label", g.GetStr("label"), "kept"},
		{"rankdir", g.GetStr("rankdir"), "LR"},
	} {
		if tc.got != tc.want {
			t.Errorf("graph %s = %q, want %q", tc.what, tc.got, tc.want)
		}
	}
	sub, err := g.SubGraphByName("cluster_a")
	if err != nil || sub == nil {
		t.Fatalf("cluster: %v", err)
	}
	if v := sub.GetStr("dpi"); v != "" {
		t.Errorf("cluster dpi = %q, want it dropped", v)
	}
	if v := sub.GetStr("label"); v != "cluster kept" {
		t.Errorf("cluster label = %q", v)
	}
	a, _ := g.NodeByName("a")
	b, _ := g.NodeByName("b")
	for _, name := range []string{"image", "shapefile", "samplepoints"} {
		if v := a.GetStr(name); v != "" {
			t.Errorf("node %s = %q, want it dropped", name, v)
		}
	}
	if v := b.GetStr("image"); v != "" {
		t.Errorf("a default image = %q reached another node", v)
	}
	if v := b.GetStr("pos"); v != "" {
		t.Errorf("node pos = %q, want it dropped", v)
	}
	if v := a.GetStr("label"); v != "A" {
		t.Errorf("node label = %q", v)
	}
	e, _ := g.FirstOut(a)
	if v := e.GetStr("_draw_"); v != "" {
		t.Errorf("edge _draw_ = %q, want it dropped", v)
	}
	if v := e.GetStr("comment"); v != "kept" {
		t.Errorf("edge comment = %q", v)
	}
}

func TestWorkBoundsAreClamped(t *testing.T) {
	g := parsed(t, `digraph {
		mclimit=100; nslimit="1e9"; nslimit1=50; searchsize=100000; ranksep="40 equally"; nodesep=0.5;
		a [peripheries=1000000 sides=100000 fontsize="1e9" width=3];
		a -> b [minlen=100000 weight="1e12" arrowsize=100];
		b -> c [minlen=2];
	}`)
	for _, tc := range []struct{ what, got, want string }{
		{"mclimit", g.GetStr("mclimit"), "1"},
		{"nslimit", g.GetStr("nslimit"), "10"},
		{"nslimit1", g.GetStr("nslimit1"), "10"},
		{"searchsize", g.GetStr("searchsize"), "30"},
		{"ranksep", g.GetStr("ranksep"), "10 equally"},
		{"nodesep", g.GetStr("nodesep"), "0.5"},
	} {
		if tc.got != tc.want {
			t.Errorf("graph %s = %q, want %q", tc.what, tc.got, tc.want)
		}
	}
	a, _ := g.NodeByName("a")
	for name, want := range map[string]string{"peripheries": "4", "sides": "32", "fontsize": "96", "width": "3"} {
		if v := a.GetStr(name); v != want {
			t.Errorf("node %s = %q, want %q", name, v, want)
		}
	}
	ab, _ := g.FirstOut(a)
	for name, want := range map[string]string{"minlen": "10", "weight": "1000", "arrowsize": "5"} {
		if v := ab.GetStr(name); v != want {
			t.Errorf("edge %s = %q, want %q", name, v, want)
		}
	}
	b, _ := g.NodeByName("b")
	bc, _ := g.FirstOut(b)
	if v := bc.GetStr("minlen"); v != "2" {
		t.Errorf("a minlen within the bound became %q", v)
	}
}

// chain is a digraph of n nodes in a line, with attrs first.
func chain(n int, attrs string) string {
	var b strings.Builder
	b.WriteString("digraph { " + attrs)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, " n%d -> n%d;", i-1, i)
	}
	b.WriteString(" }")
	return b.String()
}

func TestOrthogonalEdgesOnlyOnSmallGraphs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes int
		want  string
	}{
		{"small", maxOrthoNodes, "ortho"},
		{"large", maxOrthoNodes + 1, orthoFallback},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := parsed(t, chain(tc.nodes, "splines=ortho;"))
			if v := g.GetStr("splines"); v != tc.want {
				t.Errorf("splines = %q, want %q", v, tc.want)
			}
		})
	}
	t.Run("many edges", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("digraph { splines=ortho;")
		for i := 0; i <= maxOrthoEdges; i++ {
			fmt.Fprintf(&b, " a -> b%d;", i%10)
		}
		b.WriteString(" }")
		g := parsed(t, b.String())
		if v := g.GetStr("splines"); v != orthoFallback {
			t.Errorf("splines = %q with %d edges, want %q", v, maxOrthoEdges+1, orthoFallback)
		}
	})
}

// TestRestrictedSourcesRender checks that a source full of dropped and
// clamped attributes still renders, as the model meant it as far as the
// bounds allow.
func TestRestrictedSourcesRender(t *testing.T) {
	for _, src := range []string{
		`digraph { layout=neato; size="1,1"; node [image="/etc/passwd"]; a -> b [minlen=1000] }`,
		`digraph { a [shape=polygon sides=100000 peripheries=100000]; a -> b }`,
		chain(150, "splines=ortho; mclimit=100; nslimit=\"1e9\";"),
	} {
		if _, err := Render(context.Background(), Diagram{Source: src}); err != nil {
			t.Errorf("%.60q: %v", src, err)
		}
	}
}

func TestMinlenCountsTowardsComplexity(t *testing.T) {
	// 400 edges from one node, each made 10 ranks long: 3,600 virtual
	// nodes, over the bound of 3,000, although no edge skips a rank
	// by its ends alone.
	var b strings.Builder
	b.WriteString("digraph { root;")
	for i := range 400 {
		fmt.Fprintf(&b, " root -> n%d [minlen=10];", i)
	}
	b.WriteString(" }")
	_, err := Render(context.Background(), Diagram{Source: b.String()})
	if err == nil || !strings.Contains(err.Error(), "too complex") {
		t.Errorf("error %v, want the graph refused as too complex", err)
	}
}
