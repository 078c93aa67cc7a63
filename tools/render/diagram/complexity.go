package diagram

import (
	"fmt"

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
// are taken by longest path over the graph with its cycles broken, a
// feasible ranking that dot's own (which minimises total edge length)
// can only improve on, so the estimate errs on the high side.
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
	out := make([][]int, len(nodes))
	for i, n := range nodes {
		for e, err := g.FirstOut(n); e != nil; e, err = g.NextOut(e) {
			if err != nil {
				return 0, fmt.Errorf("walking edges: %w", err)
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
			if j, ok := index[name]; ok && j != i {
				out[i] = append(out[i], j)
			}
		}
	}
	return skippedRanks(out), nil
}

// skippedRanks ranks the nodes of a graph given as adjacency lists by
// longest path, reversing the edges that close a cycle as dot does, and
// returns the ranks skipped by all edges together.
func skippedRanks(out [][]int) int {
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
				v := out[top.node][top.next]
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
		for _, v := range out[u] {
			if !back[[2]int{u, v}] && rank[u]+1 > rank[v] {
				rank[v] = rank[u] + 1
			}
		}
	}
	skipped := 0
	for u, vs := range out {
		for _, v := range vs {
			span := rank[v] - rank[u]
			if span < 0 {
				span = -span
			}
			if span > 1 {
				skipped += span - 1
			}
		}
	}
	return skipped
}
