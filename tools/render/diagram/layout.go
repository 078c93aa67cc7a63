package diagram

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// op is one xdot drawing operation as Graphviz's "json" output writes it
// (https://graphviz.org/docs/outputs/canon/#xdot). Coordinates are in
// points with y growing upward.
type op struct {
	Op string `json:"op"`

	// Colour ("c" pen, "C" fill).
	Grad  string     `json:"grad"`
	Color string     `json:"color"`
	P0    []float64  `json:"p0"` // gradient start: x, y (and radius when radial)
	P1    []float64  `json:"p1"`
	Stops []gradStop `json:"stops"`

	// Shapes ("E"/"e" ellipse, "P"/"p" polygon, "B"/"b" Bézier, "L" polyline).
	Points [][2]float64 `json:"points"`
	Rect   []float64    `json:"rect"` // ellipse: centre x, y, radius x, y

	// Text ("T"), font ("F") and text style ("t").
	Pt       [2]float64 `json:"pt"`
	Align    string     `json:"align"`
	Width    float64    `json:"width"`
	Text     string     `json:"text"`
	Size     float64    `json:"size"`
	Face     string     `json:"face"`
	FontChar int        `json:"fontchar"`

	// Pen style ("S"): solid, dashed, dotted, invis, setlinewidth(w).
	Style string `json:"style"`
}

type gradStop struct {
	Frac  float64 `json:"frac"`
	Color string  `json:"color"`
}

// layoutObject is a cluster, subgraph or node of the "json" output.
type layoutObject struct {
	Name  string `json:"name"`
	Draw  []op   `json:"_draw_"`
	LDraw []op   `json:"_ldraw_"`
}

type layoutEdge struct {
	Draw   []op `json:"_draw_"`
	HDraw  []op `json:"_hdraw_"`
	TDraw  []op `json:"_tdraw_"`
	LDraw  []op `json:"_ldraw_"`
	HLDraw []op `json:"_hldraw_"`
	TLDraw []op `json:"_tldraw_"`
}

type layoutGraph struct {
	BB          string         `json:"bb"`
	Draw        []op           `json:"_draw_"`
	LDraw       []op           `json:"_ldraw_"`
	SubgraphCnt int            `json:"_subgraph_cnt"`
	Objects     []layoutObject `json:"objects"`
	Edges       []layoutEdge   `json:"edges"`
}

// box is a rectangle in Graphviz points.
type box struct{ minX, minY, maxX, maxY float64 }

func (b box) width() float64  { return b.maxX - b.minX }
func (b box) height() float64 { return b.maxY - b.minY }

// scene is a laid-out diagram: what to draw, in the order to draw it.
type scene struct {
	bounds box
	// background holds the root graph's own operations: its bgcolor fill.
	background []op
	// layers are drawn in order; each is a list of operation lists, and
	// each operation list starts with a fresh drawing state.
	clusters   [][]op
	edges      [][]op
	nodes      [][]op
	edgeLabels [][]op
	graphLabel []op
	// nodeCount is the number of nodes laid out.
	nodeCount int
}

// parseLayout reads Graphviz's "json" output into a scene. The order is
// the one a person expects to see: clusters at the back, then edges, then
// nodes over the edges' ends, and edge labels on top so no line crosses
// them.
func parseLayout(data []byte) (*scene, error) {
	var g layoutGraph
	if err := json.Unmarshal(escapeControls(data), &g); err != nil {
		return nil, fmt.Errorf("reading graphviz output: %w", err)
	}
	bb, err := parseBox(g.BB)
	if err != nil {
		return nil, err
	}
	s := &scene{bounds: bb, background: g.Draw, graphLabel: g.LDraw}
	for i, o := range g.Objects {
		if i >= g.SubgraphCnt {
			s.nodeCount++
		}
		ops := append(append([]op(nil), o.Draw...), o.LDraw...)
		if len(ops) == 0 {
			continue
		}
		// Subgraphs come first in "objects", parents before their
		// children, so nested clusters are drawn over the outer ones.
		if i < g.SubgraphCnt {
			s.clusters = append(s.clusters, ops)
		} else {
			s.nodes = append(s.nodes, ops)
		}
	}
	for _, e := range g.Edges {
		for _, ops := range [][]op{e.Draw, e.HDraw, e.TDraw} {
			if len(ops) > 0 {
				s.edges = append(s.edges, ops)
			}
		}
		for _, ops := range [][]op{e.LDraw, e.HLDraw, e.TLDraw} {
			if len(ops) > 0 {
				s.edgeLabels = append(s.edgeLabels, ops)
			}
		}
	}
	return s, nil
}

// parseBox reads a "llx,lly,urx,ury" bounding box.
func parseBox(s string) (box, error) {
	f := strings.Split(s, ",")
	if len(f) != 4 {
		return box{}, fmt.Errorf("reading graphviz output: bounding box %q", s)
	}
	var v [4]float64
	for i, p := range f {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return box{}, fmt.Errorf("reading graphviz output: bounding box %q", s)
		}
		v[i] = x
	}
	b := box{minX: min(v[0], v[2]), minY: min(v[1], v[3]), maxX: max(v[0], v[2]), maxY: max(v[1], v[3])}
	return b, nil
}

// escapeControls escapes the control characters inside the strings of
// Graphviz's json output, which copies them from the source unescaped
// (a raw newline or \x05 in a label) and so writes invalid JSON.
func escapeControls(data []byte) []byte {
	const hex = "0123456789abcdef"
	var out []byte // nil until the first control character
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString && c < 0x20:
			if out == nil {
				out = append(make([]byte, 0, len(data)+64), data[:i]...)
			}
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			continue
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return data
	}
	return out
}
