package diagram

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-graphviz/cgraph"
)

// Attribute kinds of cgraph's symbol tables (AGRAPH, AGNODE, AGEDGE).
const (
	kindGraph = 0
	kindNode  = 1
	kindEdge  = 2
)

// allowed lists the Graphviz attributes a diagram may set, by kind: what
// the dot layout and the drawing read, and nothing that names files,
// picks another layout engine, sizes the output (the canvas is this
// package's to size, from Aspect) or only adds work. An attribute not
// listed is dropped before the layout, wherever it was set. Values in
// clamps are bounded as well.
//
// Dropped on purpose, among others: layout (the engine is always dot),
// image, imagepath, fontpath, shapefile, stylesheet (files), size,
// ratio, page, dpi, resolution, viewport, rotate, landscape (the canvas),
// concentrate and remincross (extra passes over the whole graph that cost
// more than they give on a large one), samplepoints (points per ellipse
// in the output), _background and _draw_ (raw drawing operations), and
// the attributes of the other engines (maxiter, K, epsilon, overlap, sep,
// start, pos, pin).
var allowed = [3]map[string]bool{
	kindGraph: set("bgcolor", "center", "charset", "class", "clusterrank", "color", "colorscheme", "comment", "compound",
		"fillcolor", "fontcolor", "fontname", "fontsize", "forcelabels", "gradientangle", "href", "id", "label",
		"labeljust", "labelloc", "margin", "mclimit", "newrank", "nodesep", "nojustify", "nslimit", "nslimit1",
		"ordering", "outputorder", "pad", "pencolor", "penwidth", "peripheries", "rank", "rankdir", "ranksep",
		"searchsize", "splines", "style", "target", "TBbalance", "tooltip", "URL"),
	kindNode: set("class", "color", "colorscheme", "comment", "distortion", "fillcolor", "fixedsize", "fontcolor",
		"fontname", "fontsize", "gradientangle", "group", "height", "href", "id", "imagescale", "label", "labelloc",
		"margin", "nojustify", "ordering", "orientation", "penwidth", "peripheries", "regular", "shape", "sides",
		"skew", "style", "target", "tooltip", "URL", "width", "xlabel"),
	kindEdge: set("arrowhead", "arrowsize", "arrowtail", "class", "color", "colorscheme", "comment", "constraint",
		"decorate", "dir", "edgehref", "edgetarget", "edgetooltip", "edgeURL", "fillcolor", "fontcolor", "fontname",
		"fontsize", "headclip", "headhref", "headlabel", "headport", "headtarget", "headtooltip", "headURL", "href",
		"id", "label", "labelangle", "labeldistance", "labelfloat", "labelfontcolor", "labelfontname",
		"labelfontsize", "labelhref", "labeltarget", "labeltooltip", "labelURL", "lhead", "ltail", "minlen",
		"penwidth", "samehead", "sametail", "style", "tailclip", "tailhref", "taillabel", "tailport", "tailtarget",
		"tailtooltip", "tailURL", "target", "tooltip", "URL", "weight", "xlabel"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Work bounds of dot, clamped wherever a diagram sets them higher.
const (
	// maxMclimit scales the passes of crossing minimisation; 1 is
	// Graphviz's default.
	maxMclimit = 1.0
	// maxNslimit bounds network simplex to this many iterations per node,
	// for ranking (nslimit1) and for x coordinates (nslimit); unset, the
	// iterations are unbounded.
	maxNslimit = 10.0
	// maxSearchsize is how many edges network simplex searches for a
	// better one per step; 30 is Graphviz's default.
	maxSearchsize = 30.0
	// maxMinlen is the most ranks an edge may be made to span: each rank
	// it spans adds a virtual node to lay out.
	maxMinlen = 10.0
	// maxWeight bounds an edge's weight, which network simplex multiplies
	// into its costs.
	maxWeight = 1000.0
)

// Orthogonal edges (splines=ortho) are routed through a grid over the
// whole drawing, at a cost that grows much faster than the graph: 100
// nodes and 200 edges take a third of a second more than curved edges,
// 1,000 nodes and 2,000 edges over a minute. A larger graph that asks for
// them gets orthoFallback, straight segments routed around the nodes as
// curved edges are.
const (
	maxOrthoNodes = 100
	maxOrthoEdges = 200
	orthoFallback = "polyline"
)

// clamps bound numeric attributes by kind: work bounds, and sizes whose
// extremes only blow up the output (a node with a million peripheries is
// a million outlines to draw).
var clamps = [3]map[string]float64{
	kindGraph: {"mclimit": maxMclimit, "nslimit": maxNslimit, "nslimit1": maxNslimit, "searchsize": maxSearchsize,
		"fontsize": 96, "nodesep": 10, "ranksep": 10, "pad": 4, "penwidth": 10, "peripheries": 1},
	kindNode: {"fontsize": 96, "width": 20, "height": 20, "penwidth": 10, "peripheries": 4, "sides": 32},
	kindEdge: {"minlen": maxMinlen, "weight": maxWeight, "fontsize": 96, "labelfontsize": 96, "penwidth": 10,
		"arrowsize": 5, "labeldistance": 10},
}

// bound returns v clamped to at most limit, and whether it changed. A
// value that is not a number is left to Graphviz, which warns and uses
// its default; a value with a suffix (ranksep "1.2 equally") keeps it.
func bound(v string, limit float64) (string, bool) {
	v = strings.TrimSpace(v)
	num, rest, _ := strings.Cut(v, " ")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= limit {
		return v, false
	}
	out := strconv.FormatFloat(limit, 'f', -1, 64)
	if rest != "" {
		out += " " + rest
	}
	return out, true
}

// restrictAttributes applies allowed and clamps to every object of g,
// and the orthogonal-edge fallback for a graph of nodes and edges.
func restrictAttributes(g *cgraph.Graph, nodes, edges int) error {
	for kind := range allowed {
		var drop, clamp []string
		for sym, err := g.NextAttr(kind, nil); sym != nil; sym, err = g.NextAttr(kind, sym) {
			if err != nil {
				return fmt.Errorf("walking attributes: %w", err)
			}
			name := sym.Name()
			switch {
			case !allowed[kind][name]:
				drop = append(drop, name)
			case clamps[kind][name] > 0:
				clamp = append(clamp, name)
			}
		}
		if len(drop) == 0 && len(clamp) == 0 {
			continue
		}
		// A dropped attribute keeps its symbol (cgraph cannot delete
		// one) but no value: empty is Graphviz's "not set", except for
		// layout, which must then name the engine.
		for _, name := range drop {
			if _, err := g.Attr(kind, name, dropped(kind, name)); err != nil {
				return fmt.Errorf("dropping %s: %w", name, err)
			}
		}
		err := eachObject(g, kind, func(get func(string) string, put func(string, string) error) error {
			for _, name := range drop {
				if v := dropped(kind, name); get(name) != v {
					if err := put(name, v); err != nil {
						return err
					}
				}
			}
			for _, name := range clamp {
				if v, changed := bound(get(name), clamps[kind][name]); changed {
					if err := put(name, v); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if nodes > maxOrthoNodes || edges > maxOrthoEdges {
		return eachObject(g, kindGraph, func(get func(string) string, put func(string, string) error) error {
			if strings.EqualFold(strings.TrimSpace(get("splines")), "ortho") {
				return put("splines", orthoFallback)
			}
			return nil
		})
	}
	return nil
}

// dropped is the value a dropped attribute is given.
func dropped(kind int, name string) string {
	if kind == kindGraph && name == "layout" {
		return "dot"
	}
	return ""
}

// eachObject calls f with the accessors of every object of a kind: the
// root graph and every subgraph, every node, or every edge.
func eachObject(g *cgraph.Graph, kind int, f func(get func(string) string, put func(string, string) error) error) error {
	switch kind {
	case kindGraph:
		return eachGraph(g, func(sub *cgraph.Graph) error { return f(sub.GetStr, sub.Set) })
	case kindNode:
		for n, err := g.FirstNode(); n != nil; n, err = g.NextNode(n) {
			if err != nil {
				return fmt.Errorf("walking nodes: %w", err)
			}
			if err := f(n.GetStr, n.Set); err != nil {
				return err
			}
		}
	case kindEdge:
		for n, err := g.FirstNode(); n != nil; n, err = g.NextNode(n) {
			if err != nil {
				return fmt.Errorf("walking nodes: %w", err)
			}
			for e, err := g.FirstOut(n); e != nil; e, err = g.NextOut(e) {
				if err != nil {
					return fmt.Errorf("walking edges: %w", err)
				}
				if err := f(e.GetStr, e.Set); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eachGraph calls f with g and each of its subgraphs, depth first.
func eachGraph(g *cgraph.Graph, f func(*cgraph.Graph) error) error {
	if err := f(g); err != nil {
		return err
	}
	sub, err := g.FirstSubGraph()
	for ; sub != nil; sub, err = sub.NextSubGraph() {
		if err != nil {
			return fmt.Errorf("walking subgraphs: %w", err)
		}
		if err := eachGraph(sub, f); err != nil {
			return err
		}
	}
	return err
}
