package main

import (
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/cliflags"
)

func newInventoryCommand(g *globals) *cobra.Command {
	var local bool
	var o cliflags.Output
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Show the GPUs: the cluster's published inventory, or this machine's (--local)",
		Long: "inventory lists each GPU node with its GPU model, count, driver and MIG instances, as the\n" +
			"gpuform agent publishes it (annotation gpuform.dev/inventory), else as GPU Feature Discovery\n" +
			"labels say. With --local it reads this machine's GPUs through NVML instead (read-only).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := o.Format()
			if err != nil {
				return err
			}
			asJSON := format == formatJSON
			if local {
				inv, err := localInventory()
				if err != nil {
					return err
				}
				if asJSON {
					return render.JSONValue(g.stdout, inv)
				}
				return render.LocalInventory(g.stdout, inv)
			}
			// The configuration names the cluster; its problems are not
			// inventory's.
			opts, diags := g.loadOptions()
			var src stack.Source = stack.Dir(g.dir())
			if diags.HasErrors() {
				src = nil
			}
			nodes, err := stack.New(src, g.connect(connection{}), g.stackOptions(opts)).Nodes(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return render.JSONValue(g.stdout, struct {
					Nodes []capacity.NodeInventory `json:"nodes"`
				}{nodes})
			}
			return render.Inventory(g.stdout, nodes)
		},
	}
	addMemberFlag(cmd.Flags(), g)
	cmd.Flags().BoolVar(&local, "local", false, "read this machine's GPUs through NVML (read-only)")
	cliflags.Add(cmd.Flags(), &o, false, formatText, formatJSON)
	return cmd
}
