package main

import (
	"encoding/json"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/nvml"
)

func newInventoryCommand(g *globals) *cobra.Command {
	var local, asJSON bool
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Show the GPUs: the cluster's published inventory, or this machine's (--local)",
		Long: "inventory lists each GPU node with its GPU model, count, driver and MIG instances, as the\n" +
			"gpuform agent publishes it (annotation gpuform.dev/inventory), else as GPU Feature Discovery\n" +
			"labels say. With --local it reads this machine's GPUs through NVML instead (read-only).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if local {
				lib, err := nvml.Local()
				if err != nil {
					return err
				}
				inv, err := nvml.Read(lib, mig.Default())
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g, inv)
				}
				return writeLocalInventory(g, inv)
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
				return writeJSON(g, struct {
					Nodes []capacity.NodeInventory `json:"nodes"`
				}{nodes})
			}
			return render.Inventory(g.stdout, nodes)
		},
	}
	cmd.Flags().BoolVar(&local, "local", false, "read this machine's GPUs through NVML (read-only)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func writeJSON(g *globals, v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeLocalInventory(g *globals, inv *agentv1.Inventory) error {
	textsafe.Fprintf(g.stdout, "Driver %s, CUDA %s\n\n", inv.DriverVersion, inv.CUDAVersion)
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	textsafe.Fprintln(tw, "GPU\tNAME\tMODEL\tMEMORY\tMIG\tINSTANCES\tPROCESSES")
	for _, gpu := range inv.GPUs {
		mode := "off"
		if gpu.MIGEnabled {
			mode = "on"
		}
		if gpu.MIGPending {
			mode += " (reboot pending)"
		}
		var inst []string
		for _, in := range gpu.Instances {
			inst = append(inst, in.String())
		}
		textsafe.Fprintf(tw, "%d\t%s\t%s\t%d MiB\t%s\t%s\t%d\n", gpu.Index, gpu.Name, orDash(gpu.Model), gpu.MemoryMiB, mode, orDash(strings.Join(inst, " ")), len(gpu.Processes))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
