package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// Catalog writes the GPU catalog (gpuform catalog): each model with its
// memory and MIG geometry, and for MIG models a table of profiles with
// their slices, max instances and placements.
func Catalog(w io.Writer, gpus []*mig.GPU) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, gpu := range gpus {
		if i > 0 {
			textsafe.Fprintln(tw)
		}
		mode := "time-slicing only"
		if gpu.MIG {
			mode = fmt.Sprintf("MIG: %d compute slices, %d memory slots", gpu.ComputeSlices, gpu.MemorySlots)
		}
		textsafe.Fprintf(tw, "%s  (%s, %d MiB; %s)\n", gpu.Key, gpu.Name, gpu.MemoryMiB, mode)
		if len(gpu.Aliases) > 0 {
			textsafe.Fprintf(tw, "  aliases: %s\n", strings.Join(gpu.Aliases, ", "))
		}
		if !gpu.MIG {
			continue
		}
		textsafe.Fprintln(tw, "  PROFILE\tCOMPUTE\tMEMORY SLOTS\tMAX\tPLACEMENTS (start:size)")
		for _, p := range gpu.Profiles {
			places := make([]string, len(p.Placements))
			for j, pl := range p.Placements {
				places[j] = fmt.Sprintf("%d:%d", pl.Start, pl.Size)
			}
			textsafe.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\n", p.Name, p.ComputeSlices, p.MemorySlices, p.MaxInstances, strings.Join(places, " "))
		}
	}
	return tw.Flush()
}

// Inventory writes the cluster's GPU nodes as a table (gpuform
// inventory): GPU model, count, driver, MIG instances and where the
// inventory came from (the agent's annotation or GPU Feature Discovery's
// labels).
func Inventory(w io.Writer, nodes []capacity.NodeInventory) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	textsafe.Fprintln(tw, "NODE\tGPU\tCOUNT\tDRIVER\tMIG INSTANCES\tSOURCE")
	for _, n := range nodes {
		driver := n.Driver
		if driver == "" {
			driver = "-"
		}
		textsafe.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", n.Node, n.Model, n.GPUs, driver, migSummary(n.MIG), n.Source)
	}
	return tw.Flush()
}

// migSummary is "2 x 1g.10gb, 1 x 3g.40gb", "-" for none.
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

// LocalInventory writes this machine's GPUs as NVML reports them (gpuform
// inventory --local): the driver, then a table of GPUs with their MIG mode,
// instances and process counts.
func LocalInventory(w io.Writer, inv *agentv1.Inventory) error {
	textsafe.Fprintf(w, "Driver %s, CUDA %s\n\n", inv.DriverVersion, inv.CUDAVersion)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
