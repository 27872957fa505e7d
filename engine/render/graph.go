package render

import (
	"bufio"
	"io"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// graphColors are the DOT colours of each action, as the plan's symbols.
var graphColors = map[engine.Action]string{
	engine.ActionCreate:   "darkgreen",
	engine.ActionUpdate:   "darkorange",
	engine.ActionAdopt:    "darkorange",
	engine.ActionDelete:   "red3",
	engine.ActionConflict: "red3",
}

// Graph writes the plan's changes as a Graphviz DOT digraph (gpuform
// graph, like terraform graph): one node per change, labelled with its
// symbol, object and address and coloured by action, and an edge from each
// change to each change of the plan it depends on (the edge's head is
// applied first). Render it with `dot -Tsvg`.
func Graph(w io.Writer, p *engine.Plan) error {
	bw := bufio.NewWriter(w)
	textsafe.Fprintf(bw, "digraph %s {\n", dotID("gpuform "+p.Stack))
	textsafe.Fprintf(bw, "  rankdir = \"RL\";\n  node [shape = \"box\", fontname = \"monospace\"];\n")
	inPlan := make(map[engine.Key]bool, len(p.Changes))
	for _, c := range p.Changes {
		inPlan[c.Key] = true
	}
	for _, c := range p.Changes {
		label := c.Action.Symbol() + " " + c.Key.String() + "\n" + c.Address
		textsafe.Fprintf(bw, "  %s [label = %s, color = %s];\n", dotID(c.Key.String()), dotID(label), dotID(graphColors[c.Action]))
	}
	for _, c := range p.Changes {
		seen := map[engine.Key]bool{}
		for _, d := range c.DependsOn {
			if inPlan[d] && !seen[d] {
				seen[d] = true
				textsafe.Fprintf(bw, "  %s -> %s;\n", dotID(c.Key.String()), dotID(d.String()))
			}
		}
	}
	textsafe.Fprintf(bw, "}\n")
	return bw.Flush()
}

// dotID quotes s as a DOT string: backslashes and quotes escaped, line
// breaks as \n.
func dotID(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s) + `"`
}
