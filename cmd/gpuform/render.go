package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/render"
)

func newRenderCommand(g *globals) *cobra.Command {
	var showSensitive bool
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the desired Kubernetes objects as YAML",
		Long: "render prints every object the configuration becomes, in apply order, as multi-document\n" +
			"YAML that kubectl apply -f takes. It reads no cluster: node labels of pools are not included.\n" +
			"Objects holding values of sensitive variables are left out unless --show-sensitive is given.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, done, err := g.newStack("", "", connection{})
			if err != nil {
				return err
			}
			defer done()
			desired, err := st.Compile(cmd.Context())
			if err != nil {
				return g.fail(err, "")
			}
			return render.YAML(g.stdout, desired, showSensitive)
		},
	}
	addMemberFlag(cmd.Flags(), g)
	cmd.Flags().BoolVar(&showSensitive, "show-sensitive", false, "print objects that hold sensitive values")
	return cmd
}
