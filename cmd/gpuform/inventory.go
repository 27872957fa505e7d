package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
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
			cfg, _ := g.loadValid()
			cl, err := g.openCluster(cfg)
			if err != nil {
				return err
			}
			live, err := cl.Refresh(cmd.Context(), &engine.Desired{Stack: "-"}, engine.RefreshOptions{})
			if err != nil {
				return err
			}
			var nodes []capacity.NodeInventory
			cat := mig.Default()
			for _, n := range live.Nodes {
				if inv := capacity.InventoryOf(n, cat); inv.Source != "none" {
					nodes = append(nodes, inv)
				}
			}
			if asJSON {
				return writeJSON(g, struct {
					Nodes []capacity.NodeInventory `json:"nodes"`
				}{nodes})
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tGPU\tCOUNT\tDRIVER\tMIG INSTANCES\tSOURCE")
			for _, n := range nodes {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", n.Node, n.Model, n.GPUs, orDash(n.Driver), migSummary(n.MIG), n.Source)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			g.writeDiags(cfg, capacity.InventoryWarnings(cfg, live.Nodes, cat))
			return nil
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
	fmt.Fprintf(g.stdout, "Driver %s, CUDA %s\n\n", inv.DriverVersion, inv.CUDAVersion)
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tNAME\tMODEL\tMEMORY\tMIG\tINSTANCES\tPROCESSES")
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d MiB\t%s\t%s\t%d\n", gpu.Index, gpu.Name, orDash(gpu.Model), gpu.MemoryMiB, mode, orDash(strings.Join(inst, " ")), len(gpu.Processes))
	}
	return tw.Flush()
}

func migSummary(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d x %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
