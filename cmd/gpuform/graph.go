package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
)

func newGraphCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Print the planned changes and their dependencies as a Graphviz DOT graph",
		Long: "graph plans as plan does and prints the changes as a DOT digraph: a node per change, coloured\n" +
			"by action, and an edge from each change to each change it waits for. Render it with\n" +
			"gpuform graph | dot -Tsvg > plan.svg.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, done, err := g.newStack("", "", connection{})
			if err != nil {
				return err
			}
			defer done()
			res, err := st.Plan(cmd.Context(), stack.PlanOptions{})
			if err != nil {
				return g.fail(err, "")
			}
			return render.Graph(g.stdout, res.Plan)
		},
	}
	addMemberFlag(cmd.Flags(), g)
	return cmd
}
