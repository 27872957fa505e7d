package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
)

func newCatalogCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "List the GPU models with their MIG profiles, max instances and placements",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			gpus := mig.Default().GPUs()
			if asJSON {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					GPUs []*mig.GPU `json:"gpus"`
				}{gpus})
			}
			return render.Catalog(g.stdout, gpus)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalog as JSON")
	return cmd
}
