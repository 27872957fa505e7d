package render_test

import (
	"bytes"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// parseGraph parses DOT with gonum's parser and returns its one directed
// graph's node IDs (unquoted) and edges as from -> to.
func parseGraph(t *testing.T, src string) (nodes map[string]bool, edges map[[2]string]bool) {
	t.Helper()
	f, err := dot.ParseString(src)
	if err != nil {
		t.Fatalf("the DOT does not parse: %v\n%s", err, src)
	}
	if len(f.Graphs) != 1 || !f.Graphs[0].Directed {
		t.Fatalf("want one digraph, got %d graphs", len(f.Graphs))
	}
	id := func(v ast.Vertex) string {
		n, ok := v.(*ast.Node)
		if !ok {
			t.Fatalf("vertex %v is not a node", v)
		}
		s, err := strconv.Unquote(n.ID)
		if err != nil {
			t.Fatalf("node ID %s: %v", n.ID, err)
		}
		return s
	}
	nodes, edges = map[string]bool{}, map[[2]string]bool{}
	for _, st := range f.Graphs[0].Stmts {
		switch st := st.(type) {
		case *ast.NodeStmt:
			nodes[id(st.Node)] = true
		case *ast.EdgeStmt:
			if !st.To.Directed || st.To.To != nil {
				t.Errorf("edge %v is not one directed edge", st)
			}
			edges[[2]string{id(st.From), id(st.To.Vertex)}] = true
		}
	}
	return nodes, edges
}

// gpuform graph: the quickstart's first plan as DOT (golden) that parses,
// with a node per change and exactly the plan's dependencies as edges.
func TestRenderGraph(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.EmptyLive(t)
	live.Nodes = []*unstructured.Unstructured{enginetest.GPUNode("gpu-a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 4, "")}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	var b bytes.Buffer
	if err := render.Graph(&b, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan/graph.dot", b.String())
	nodes, edges := parseGraph(t, b.String())
	want := map[[2]string]bool{}
	for _, c := range p.Changes {
		if !nodes[c.Key.String()] {
			t.Errorf("no node for %s", c.Key)
		}
		for _, dep := range c.DependsOn {
			if nodes[dep.String()] {
				want[[2]string{c.Key.String(), dep.String()}] = true
			}
		}
	}
	if len(nodes) != len(p.Changes) {
		t.Errorf("%d nodes for %d changes", len(nodes), len(p.Changes))
	}
	if len(want) == 0 {
		t.Fatal("the plan has no dependencies to draw")
	}
	for e := range want {
		if !edges[e] {
			t.Errorf("missing edge %s -> %s", e[0], e[1])
		}
	}
	for e := range edges {
		if !want[e] {
			t.Errorf("edge %s -> %s is no dependency of the plan", e[0], e[1])
		}
	}
}

// Names with quotes, backslashes and line breaks stay inside their DOT
// strings.
func TestRenderGraphEscapes(t *testing.T) {
	odd := engine.Key{Kind: "Namespace", Name: "a\"b\\c"}
	p := &engine.Plan{Stack: "s\"x", Changes: []*engine.Change{
		{Address: "tenant.x\n}", Key: odd, Action: engine.ActionCreate},
		{Address: "tenant.y", Key: engine.Key{Kind: "ResourceQuota", Namespace: "a\"b\\c", Name: "q"}, Action: engine.ActionCreate, DependsOn: []engine.Key{odd}},
	}}
	var b bytes.Buffer
	if err := render.Graph(&b, p); err != nil {
		t.Fatal(err)
	}
	nodes, edges := parseGraph(t, b.String())
	if len(nodes) != 2 || !nodes[odd.String()] || len(edges) != 1 {
		t.Errorf("nodes %v, edges %v:\n%s", nodes, edges, b.String())
	}
}
