// Package dag is a directed graph of dependencies between nodes: a
// deterministic topological order, and cycle detection that names the
// nodes of the cycle.
//
// It is a leaf package: gpuform's plan ordering (engine's order) and the
// apply walk (engine.Apply) both build one, so that a cycle, from a bug or
// from an edited plan file, is an error before anything is written instead
// of an apply that waits forever.
package dag

import (
	"fmt"
	"strings"
)

// Graph is a directed graph over nodes of type N, in which an edge from a
// to b says that a depends on b: b comes first. Nodes keep the order they
// were added in and each node's edges the order they were added in; those
// orders make Sort deterministic. Parallel edges are allowed. Create one
// with New.
type Graph[N comparable] struct {
	index map[N]int
	nodes []N
	deps  [][]int
}

// New returns an empty graph with room for about size nodes.
func New[N comparable](size int) *Graph[N] {
	return &Graph[N]{index: make(map[N]int, size), nodes: make([]N, 0, size), deps: make([][]int, 0, size)}
}

// Add adds node n, unless the graph has it already.
func (g *Graph[N]) Add(n N) {
	g.id(n)
}

// id returns the index of n, adding it first when it is new.
func (g *Graph[N]) id(n N) int {
	if i, ok := g.index[n]; ok {
		return i
	}
	i := len(g.nodes)
	g.index[n] = i
	g.nodes = append(g.nodes, n)
	g.deps = append(g.deps, nil)
	return i
}

// AddEdge records that from depends on to (to comes first), adding either
// node when the graph does not have it yet. An edge from a node to itself
// is a cycle.
func (g *Graph[N]) AddEdge(from, to N) {
	f, t := g.id(from), g.id(to)
	g.deps[f] = append(g.deps[f], t)
}

// Nodes returns the nodes in the order they were added.
func (g *Graph[N]) Nodes() []N {
	return append([]N(nil), g.nodes...)
}

// DependsOn returns what n depends on, in the order the edges were added
// (nil when n is not in the graph).
func (g *Graph[N]) DependsOn(n N) []N {
	i, ok := g.index[n]
	if !ok || len(g.deps[i]) == 0 {
		return nil
	}
	out := make([]N, len(g.deps[i]))
	for j, d := range g.deps[i] {
		out[j] = g.nodes[d]
	}
	return out
}

// Sort returns every node after everything it depends on: a depth-first
// walk from each node in the order they were added, each node's
// dependencies in the order of its edges, a node placed once all of its
// dependencies are. When the graph has a cycle it returns a *CycleError
// naming the nodes of one cycle, and no order.
func (g *Graph[N]) Sort() ([]N, error) {
	const (
		unseen = iota
		onPath
		placed
	)
	state := make([]uint8, len(g.nodes))
	out := make([]N, 0, len(g.nodes))
	var path []frame
	for root := range g.nodes {
		if state[root] != unseen {
			continue
		}
		state[root] = onPath
		path = append(path, frame{node: root})
		for len(path) > 0 {
			top := &path[len(path)-1]
			if top.next == len(g.deps[top.node]) {
				state[top.node] = placed
				out = append(out, g.nodes[top.node])
				path = path[:len(path)-1]
				continue
			}
			d := g.deps[top.node][top.next]
			top.next++
			switch state[d] {
			case unseen:
				state[d] = onPath
				path = append(path, frame{node: d})
			case onPath:
				return nil, g.cycle(path, d)
			}
		}
	}
	return out, nil
}

// frame is a node on the path of Sort's walk and the index of the next of
// its edges to follow.
type frame struct{ node, next int }

// cycle names the cycle that closes when the last node of path depends on
// d, a node on path.
func (g *Graph[N]) cycle(path []frame, d int) *CycleError[N] {
	start := len(path) - 1
	for path[start].node != d {
		start--
	}
	e := &CycleError[N]{Cycle: make([]N, 0, len(path)-start+1)}
	for _, f := range path[start:] {
		e.Cycle = append(e.Cycle, g.nodes[f.node])
	}
	e.Cycle = append(e.Cycle, g.nodes[d])
	return e
}

// CycleError is a graph whose nodes depend on each other in a cycle, so
// that no order puts each after what it depends on.
type CycleError[N comparable] struct {
	// Cycle lists the nodes of the cycle, each depending on the next; the
	// last is the first again (a self-loop is [n, n]).
	Cycle []N
}

// Error names the nodes of the cycle, each depending on the next.
func (e *CycleError[N]) Error() string {
	names := make([]string, len(e.Cycle))
	for i, n := range e.Cycle {
		names[i] = fmt.Sprint(n)
	}
	return "dependency cycle: " + strings.Join(names, " -> ")
}
