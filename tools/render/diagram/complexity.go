package diagram

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-graphviz/cgraph"
)

// maxVirtualNodes bounds the work of dot's layout: the virtual nodes it
// adds, one for every rank an edge skips. Crossing minimisation grows
// about with the cube of their number when they crowd the same ranks: a
// dependency matrix of 45 nodes and 345 long edges (4,700 virtual nodes)
// takes Graphviz 3 s natively, 60 nodes and 610 edges a minute, while a
// chain or tree of 1,000 nodes with short edges takes well under one.
const maxVirtualNodes = 3000

// virtualNodes estimates how many virtual nodes dot will add to g. Ranks
// are taken by longest path over the graph with its cycles broken, each
// edge at least its minlen long, a feasible ranking that dot's own (which
// minimises total edge length) can only improve on, so the estimate errs
// on the high side. When any edge has a label, dot doubles every rank
// and puts the label on a node of its own in the middle.
func virtualNodes(g *cgraph.Graph) (int, error) {
	index := make(map[string]int)
	var nodes []*cgraph.Node
	for n, err := g.FirstNode(); n != nil; n, err = g.NextNode(n) {
		if err != nil {
			return 0, fmt.Errorf("walking nodes: %w", err)
		}
		name, err := n.Name()
		if err != nil {
			return 0, fmt.Errorf("reading a node name: %w", err)
		}
		index[name] = len(nodes)
		nodes = append(nodes, n)
	}
	out := make([][]arc, len(nodes))
	labelled := false
	for i, n := range nodes {
		for e, err := g.FirstOut(n); e != nil; e, err = g.NextOut(e) {
			if err != nil {
				return 0, fmt.Errorf("walking edges: %w", err)
			}
			if e.GetStr("label") != "" {
				labelled = true
			}
			if e.GetStr("constraint") == "false" {
				continue
			}
			h, err := e.Head()
			if err != nil || h == nil {
				return 0, fmt.Errorf("reading an edge head: %w", err)
			}
			name, err := h.Name()
			if err != nil {
				return 0, fmt.Errorf("reading a node name: %w", err)
			}
			minlen := 1
			if v, err := strconv.ParseFloat(strings.TrimSpace(e.GetStr("minlen")), 64); err == nil {
				minlen = int(max(0, min(v, maxMinlen)))
			}
			if j, ok := index[name]; ok && j != i {
				out[i] = append(out[i], arc{to: j, minlen: minlen})
			}
		}
	}
	return skippedRanks(out, labelled), nil
}

// arc is an edge of skippedRanks' graph: its head and its least length.
type arc struct{ to, minlen int }

// longestPathRanks ranks the nodes of a graph given as adjacency lists
// by longest path, reversing the edges that close a cycle as dot does
// (by depth-first search in node order).
func longestPathRanks(out [][]arc) []int {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(out))
	order := make([]int, 0, len(out)) // reverse topological order
	back := make(map[[2]int]bool)
	type frame struct{ node, next int }
	for root := range out {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = open
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(out[top.node]) {
				v := out[top.node][top.next].to
				top.next++
				switch state[v] {
				case unseen:
					state[v] = open
					stack = append(stack, frame{v, 0})
				case open:
					back[[2]int{top.node, v}] = true
				}
				continue
			}
			state[top.node] = done
			order = append(order, top.node)
			stack = stack[:len(stack)-1]
		}
	}
	rank := make([]int, len(out))
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		for _, a := range out[u] {
			if !back[[2]int{u, a.to}] && rank[u]+a.minlen > rank[a.to] {
				rank[a.to] = rank[u] + a.minlen
			}
		}
	}
	return rank
}

// skippedRanks ranks the nodes of a graph given as adjacency lists (see
// longestPathRanks) and returns the virtual nodes of all edges together:
// one for each rank an edge skips, or with labelled ranks doubled, one
// for each rank it spans and one for each it skips.
func skippedRanks(out [][]arc, labelled bool) int {
	rank := longestPathRanks(out)
	skipped := 0
	for u, arcs := range out {
		for _, a := range arcs {
			span := rank[a.to] - rank[u]
			if span < 0 {
				span = -span
			}
			switch {
			case labelled && span > 0:
				skipped += 2*span - 1
			case span > 1:
				skipped += span - 1
			}
		}
	}
	return skipped
}
