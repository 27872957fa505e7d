package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/mig"
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
			return writeCatalog(g, gpus)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalog as JSON")
	return cmd
}

func writeCatalog(g *globals, gpus []*mig.GPU) error {
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	for i, gpu := range gpus {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		mode := "time-slicing only"
		if gpu.MIG {
			mode = fmt.Sprintf("MIG: %d compute slices, %d memory slots", gpu.ComputeSlices, gpu.MemorySlots)
		}
		fmt.Fprintf(tw, "%s  (%s, %d MiB; %s)\n", gpu.Key, gpu.Name, gpu.MemoryMiB, mode)
		if len(gpu.Aliases) > 0 {
			fmt.Fprintf(tw, "  aliases: %s\n", strings.Join(gpu.Aliases, ", "))
		}
		if !gpu.MIG {
			continue
		}
		fmt.Fprintln(tw, "  PROFILE\tCOMPUTE\tMEMORY SLOTS\tMAX\tPLACEMENTS (start:size)")
		for _, p := range gpu.Profiles {
			places := make([]string, len(p.Placements))
			for j, pl := range p.Placements {
				places[j] = fmt.Sprintf("%d:%d", pl.Start, pl.Size)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\n", p.Name, p.ComputeSlices, p.MemorySlices, p.MaxInstances, strings.Join(places, " "))
		}
	}
	return tw.Flush()
}
