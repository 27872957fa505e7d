package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// Catalog writes the GPU catalog (gpuform catalog): each model with its
// memory and MIG geometry, its names and PCI device IDs, and for MIG models
// a table of profiles with their slices, max instances and placements.
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
		if len(gpu.PCIDeviceIDs) > 0 {
			ids := make([]string, len(gpu.PCIDeviceIDs))
			for j, id := range gpu.PCIDeviceIDs {
				ids[j] = mig.FormatPCIDeviceID(id)
			}
			textsafe.Fprintf(tw, "  PCI device IDs: %s\n", strings.Join(ids, ", "))
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
