package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/internal/cliflags"
)

func newCatalogCommand(g *globals) *cobra.Command {
	var o cliflags.Output
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "List the GPU models with their MIG profiles, max instances and placements",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			format, err := o.Format()
			if err != nil {
				return err
			}
			gpus := mig.Default().GPUs()
			if format == formatJSON {
				return render.CatalogJSON(g.stdout, gpus)
			}
			return render.Catalog(g.stdout, gpus)
		},
	}
	cliflags.Add(cmd.Flags(), &o, false, formatText, formatJSON)
	return cmd
}
