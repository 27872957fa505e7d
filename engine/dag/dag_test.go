package dag_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine/dag"
)

// edge is "from depends on to".
type edge struct{ from, to string }

func build(nodes []string, edges []edge) *dag.Graph[string] {
	g := dag.New[string](len(nodes))
	for _, n := range nodes {
		g.Add(n)
	}
	for _, e := range edges {
		g.AddEdge(e.from, e.to)
	}
	return g
}

func TestSort(t *testing.T) {
	tests := []struct {
		name  string
		nodes []string
		edges []edge
		// want is the order; nil when a cycle is expected.
		want []string
		// cycle is the cycle reported (each depends on the next).
		cycle []string
	}{
		{name: "empty", want: []string{}},
		{name: "no edges keeps insertion order", nodes: []string{"c", "a", "b"}, want: []string{"c", "a", "b"}},
		{
			name:  "dependencies first, depth first in insertion and edge order",
			nodes: []string{"app", "ns", "queue", "flavor"},
			edges: []edge{{"app", "queue"}, {"app", "ns"}, {"queue", "flavor"}, {"queue", "ns"}},
			want:  []string{"flavor", "ns", "queue", "app"},
		},
		{
			name:  "edges add missing nodes after the others",
			nodes: []string{"a"},
			edges: []edge{{"a", "b"}, {"c", "a"}},
			want:  []string{"b", "a", "c"},
		},
		{
			name:  "parallel edges and a diamond",
			nodes: []string{"top", "left", "right", "bottom"},
			edges: []edge{{"top", "left"}, {"top", "right"}, {"top", "left"}, {"left", "bottom"}, {"right", "bottom"}},
			want:  []string{"bottom", "left", "right", "top"},
		},
		{name: "self-loop", nodes: []string{"a", "b"}, edges: []edge{{"b", "b"}}, cycle: []string{"b", "b"}},
		{name: "2-cycle", nodes: []string{"a", "b"}, edges: []edge{{"a", "b"}, {"b", "a"}}, cycle: []string{"a", "b", "a"}},
		{
			name:  "longer cycle behind an acyclic prefix",
			nodes: []string{"x", "a", "b", "c", "d"},
			edges: []edge{{"x", "a"}, {"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "b"}},
			cycle: []string{"b", "c", "d", "b"},
		},
		{
			name:  "cycle reached from a later root",
			nodes: []string{"free", "p", "q"},
			edges: []edge{{"p", "q"}, {"q", "p"}},
			cycle: []string{"p", "q", "p"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.nodes, tt.edges)
			got, err := g.Sort()
			if tt.cycle != nil {
				var ce *dag.CycleError[string]
				if !errors.As(err, &ce) {
					t.Fatalf("Sort = %v, %v; want a cycle error", got, err)
				}
				if !slices.Equal(ce.Cycle, tt.cycle) {
					t.Errorf("cycle %v, want %v", ce.Cycle, tt.cycle)
				}
				if want := strings.Join(tt.cycle, " -> "); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the cycle %s", err, want)
				}
				if got != nil {
					t.Errorf("an order came with the cycle: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order %v, want %v", got, tt.want)
			}
			// Every node comes after what it depends on.
			pos := map[string]int{}
			for i, n := range got {
				pos[n] = i
			}
			for _, e := range tt.edges {
				if pos[e.from] < pos[e.to] {
					t.Errorf("%s comes before %s, which it depends on", e.from, e.to)
				}
			}
		})
	}
}

// The order is the same however often it is computed, and a long chain
// (deeper than a recursive walk would like) sorts.
func TestSortDeterministicAndDeep(t *testing.T) {
	const n = 100000
	g := dag.New[int](n)
	for i := range n {
		g.Add(i)
		if i > 0 {
			g.AddEdge(i-1, i) // each depends on the next: reversed order
		}
	}
	first, err := g.Sort()
	if err != nil {
		t.Fatal(err)
	}
	if first[0] != n-1 || first[n-1] != 0 {
		t.Fatalf("order starts %d and ends %d, want %d and 0", first[0], first[n-1], n-1)
	}
	again, _ := g.Sort()
	if !slices.Equal(first, again) {
		t.Error("two sorts of one graph differ")
	}
	g.AddEdge(n-1, 0)
	var ce *dag.CycleError[int]
	if _, err := g.Sort(); !errors.As(err, &ce) || len(ce.Cycle) != n+1 {
		t.Errorf("closing the chain: %v, want a cycle of all %d nodes", err, n)
	}
}

func TestAccessors(t *testing.T) {
	g := build([]string{"a", "b"}, []edge{{"a", "b"}, {"a", "c"}})
	if len(g.Nodes()) != 3 || !slices.Contains(g.Nodes(), "c") || slices.Contains(g.Nodes(), "d") {
		t.Errorf("Nodes() = %v, want a, b and c", g.Nodes())
	}
	if got := g.DependsOn("a"); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("DependsOn(a) = %v", got)
	}
	if got := g.DependsOn("missing"); got != nil {
		t.Errorf("DependsOn(missing) = %v", got)
	}
	nodes := g.Nodes()
	nodes[0] = "changed"
	if g.Nodes()[0] != "a" {
		t.Error("Nodes shares the graph's storage")
	}
}
