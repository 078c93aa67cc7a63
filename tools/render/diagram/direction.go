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
	var labels []edgeLabel
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
			j, ok := index[name]
			if !ok || j == i {
				continue
			}
			out[i] = append(out[i], arc{to: j, minlen: 1})
			if l := e.GetStr("label"); l != "" {
				if strings.HasPrefix(strings.TrimSpace(l), "<") {
					return est, false, nil
				}
				w, h := textSize(l, fontSize(e.GetStr("fontsize")))
				if lr {
					w, h = h, w
				}
				labels = append(labels, edgeLabel{from: i, to: j, along: h, across: w})
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
	// thin, but kept nodesep from its neighbours. When edges have
	// labels, dot puts a rank between every two, where each edge has a
	// virtual node and each label a node of its size, and halves the
	// spacing: the gaps add up to the same length, plus the labels'.
	gapAlong := make([]float64, top)
	gapAcross := make([]float64, top)
	gapCount := make([]int, top)
	for u, arcs := range out {
		for _, a := range arcs {
			lo, hi := min(rank[u], rank[a.to]), max(rank[u], rank[a.to])
			for r := lo + 1; r < hi; r++ {
				rankCount[r]++
			}
			for g := lo; g < hi; g++ {
				gapCount[g]++
			}
		}
	}
	for _, l := range labels {
		lo, hi := min(rank[l.from], rank[l.to]), max(rank[l.from], rank[l.to])
		if lo == hi {
			continue
		}
		g := (lo + hi - 1) / 2
		gapAlong[g] = max(gapAlong[g], l.along)
		gapAcross[g] += l.across
	}
	for r := range rankAlong {
		est.length += rankAlong[r]
		est.breadth = max(est.breadth, rankAcross[r]+nodesep*float64(max(rankCount[r]-1, 0)))
	}
	if len(labels) > 0 {
		for g := range gapAlong {
			est.length += gapAlong[g]
			est.breadth = max(est.breadth, gapAcross[g]+nodesep*float64(max(gapCount[g]-1, 0)))
		}
	}
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
	w, h = textSize(label, fontSize(n.GetStr("fontsize")))
	mx, my := 0.11, 0.055
	if m := strings.Split(n.GetStr("margin"), ","); len(m) > 0 && m[0] != "" {
		mx = inches(m[0], mx)
		my = mx
		if len(m) > 1 {
			my = inches(m[1], my)
		}
	}
	w += 2 * mx * 72
	h += 2 * my * 72
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

// edgeLabel is an edge's label in estimateShape: the edge's ends, and
// the label's extent along and across the ranks.
type edgeLabel struct {
	from, to      int
	along, across float64
}

// textSize estimates the width and height in points of a label's text.
func textSize(label string, size float64) (w, h float64) {
	lines := strings.FieldsFunc(strings.NewReplacer(`\n`, "\n", `\l`, "\n", `\r`, "\n").Replace(label), func(r rune) bool { return r == '\n' })
	longest := 0
	for _, l := range lines {
		longest = max(longest, len([]rune(l)))
	}
	// About half an em a character: the estimate needs the size within
	// estimateMargin, not to the point.
	return 0.5 * size * float64(longest), 1.2 * size * float64(max(len(lines), 1))
}

// fontSize parses a fontsize attribute; Graphviz's default is 14.
func fontSize(v string) float64 {
	if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 {
		return f
	}
	return 14
}

// inches parses a size attribute, or returns def.
func inches(v string, def float64) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 {
		return def
	}
	return f
}
