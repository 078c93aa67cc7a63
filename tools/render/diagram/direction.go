package diagram

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-graphviz/cgraph"
)

// A layout of a graph in the direction an aspect tries first (see
// layoutLocked) that comes out a long strip is laid out again in the
// other direction, which then usually wins. For a plain graph the strip
// shows before any layout: its ranks, counted by longest path, and the
// nodes of its widest rank give the length and breadth of either
// direction. When that estimate is a strip by a wide margin, the worker
// lays the graph out in the other direction only, and the caller checks
// that this layout beats even the least elongated first layout the
// estimate allows (see shortcutHolds); when it does not, the first
// direction is laid out as well and the two compared as without the
// estimate. The result is then the same as with both layouts, one
// layout sooner.

// estimateMargin is how far the estimated aspect of a layout may be off
// the real one, as a factor: a strip is taken for one only when it is
// still one at its estimate divided by this.
const estimateMargin = 2.0

// shapeEstimate is the estimated extent of a graph's layout in one rank
// direction, in points: length along the ranks, breadth across them.
type shapeEstimate struct {
	length, breadth float64
}

// ratio is the estimated width-to-height ratio for rankdir.
func (e shapeEstimate) ratio(rankdir string) float64 {
	if rankdir == "LR" || rankdir == "RL" {
		return e.length / max(e.breadth, 1)
	}
	return e.breadth / max(e.length, 1)
}

// estimateShape estimates the extent of g's layout with rankdir. ok is
// false for a graph the estimate does not model: one with subgraphs
// (clusters and rank constraints), HTML or record labels, edges that
// change the ranking, or graph attributes that scale or turn the layout.
func estimateShape(g *cgraph.Graph, rankdir string) (est shapeEstimate, ok bool, err error) {
	sub, err := g.FirstSubGraph()
	if err != nil {
		return est, false, fmt.Errorf("walking subgraphs: %w", err)
	}
	if sub != nil {
		return est, false, nil
	}
	for _, a := range []string{"ratio", "size", "rotate", "landscape", "orientation", "newrank", "ranksep", "nodesep"} {
		// ranksep and nodesep are the theme's own unless the source
		// changed them (see defaultStatements).
		switch v := strings.TrimSpace(g.GetStr(a)); {
		case a == "ranksep" && v == "0.45", a == "nodesep" && v == "0.3", v == "":
		default:
			return est, false, nil
		}
	}
	const ranksep, nodesep = 0.45 * 72, 0.3 * 72
	lr := rankdir == "LR" || rankdir == "RL"

	index := make(map[string]int)
	var along, across []float64 // node extents in points
	var nodes []*cgraph.Node
	for n, err := g.FirstNode(); n != nil; n, err = g.NextNode(n) {
		if err != nil {
			return est, false, fmt.Errorf("walking nodes: %w", err)
		}
		name, err := n.Name()
		if err != nil {
			return est, false, fmt.Errorf("reading a node name: %w", err)
		}
		w, h, ok := nodeSize(n, name)
		if !ok {
			return est, false, nil
		}
		if lr {
			w, h = h, w
		}
		index[name] = len(nodes)
		nodes = append(nodes, n)
		along = append(along, h)
		across = append(across, w)
	}
	out := make([][]arc, len(nodes))
	for i, n := range nodes {
		for e, err := g.FirstOut(n); e != nil; e, err = g.NextOut(e) {
			if err != nil {
				return est, false, fmt.Errorf("walking edges: %w", err)
			}
			for _, a := range []string{"minlen", "constraint", "weight", "lhead", "ltail", "samehead", "sametail"} {
				if e.GetStr(a) != "" {
					return est, false, nil
				}
			}
			h, err := e.Head()
			if err != nil || h == nil {
				return est, false, fmt.Errorf("reading an edge head: %w", err)
			}
			name, err := h.Name()
			if err != nil {
				return est, false, fmt.Errorf("reading a node name: %w", err)
			}
			if j, ok := index[name]; ok && j != i {
				out[i] = append(out[i], arc{to: j, minlen: 1})
			}
		}
	}
	if len(nodes) == 0 {
		return est, false, nil
	}
	rank := longestPathRanks(out)
	top := 0
	for _, r := range rank {
		top = max(top, r)
	}
	rankAlong := make([]float64, top+1)
	rankAcross := make([]float64, top+1)
	rankCount := make([]int, top+1)
	for i, r := range rank {
		rankAlong[r] = max(rankAlong[r], along[i])
		rankAcross[r] += across[i]
		rankCount[r]++
	}
	// An edge that skips ranks passes through them as a virtual node,
	// thin, but kept nodesep from its neighbours.
	for u, arcs := range out {
		for _, a := range arcs {
			for r := min(rank[u], rank[a.to]) + 1; r < max(rank[u], rank[a.to]); r++ {
				rankCount[r]++
			}
		}
	}
	for r := range rankAlong {
		est.length += rankAlong[r]
		est.breadth = max(est.breadth, rankAcross[r]+nodesep*float64(max(rankCount[r]-1, 0)))
	}
	// With edge labels dot doubles the ranks and halves their spacing:
	// the gaps add up to the same length.
	est.length += ranksep * float64(top)
	return est, true, nil
}

// nodeSize estimates a node's width and height in points from its
// label, font size, margin and least size, as dot sizes a box. ok is
// false for labels it cannot measure (HTML, records).
func nodeSize(n *cgraph.Node, name string) (w, h float64, ok bool) {
	switch strings.ToLower(n.GetStr("shape")) {
	case "record", "mrecord", "point", "plaintext", "plain", "none":
		return 0, 0, false
	}
	if n.GetStr("fixedsize") != "" && n.GetStr("fixedsize") != "false" {
		return 0, 0, false
	}
	label := n.GetStr("label")
	if strings.HasPrefix(strings.TrimSpace(label), "<") {
		return 0, 0, false
	}
	if label == "" || label == `\N` {
		label = name
	}
	size := 14.0
	if f, err := strconv.ParseFloat(strings.TrimSpace(n.GetStr("fontsize")), 64); err == nil && f > 0 {
		size = f
	}
	lines := strings.FieldsFunc(strings.NewReplacer(`\n`, "\n", `\l`, "\n", `\r`, "\n").Replace(label), func(r rune) bool { return r == '\n' })
	longest := 0
	for _, l := range lines {
		longest = max(longest, len([]rune(l)))
	}
	mx, my := 0.11, 0.055
	if m := strings.Split(n.GetStr("margin"), ","); len(m) > 0 && m[0] != "" {
		mx = inches(m[0], mx)
		my = mx
		if len(m) > 1 {
			my = inches(m[1], my)
		}
	}
	// About half an em a character: the estimate needs the size within
	// estimateMargin, not to the point.
	w = 0.5*size*float64(longest) + 2*mx*72
	h = 1.2*size*float64(max(len(lines), 1)) + 2*my*72
	switch strings.ToLower(n.GetStr("shape")) {
	case "box", "rect", "rectangle", "square", "":
	default:
		// Ellipses and diamonds wrap the text's box, about half as
		// wide and high again.
		w, h = w*1.4, h*1.4
	}
	w = max(inches(n.GetStr("width"), 0.75)*72, w)
	h = max(inches(n.GetStr("height"), 0.5)*72, h)
	return w, h, true
}

// inches parses a size attribute, or returns def.
func inches(v string, def float64) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 {
		return def
	}
	return f
}
