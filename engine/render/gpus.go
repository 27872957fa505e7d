package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// Catalog writes the GPU catalog (gpuform catalog): each model with its
// memory and MIG geometry, its names and PCI device IDs, and for MIG models
// a table of profiles with their slices, max instances and placements,
// drawn over the memory slots (placements that overlap on further rows).
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
		textsafe.Fprintln(tw, "  PROFILE\tCOMPUTE\tMEMORY SLOTS\tMAX\tPLACEMENTS")
		textsafe.Fprintf(tw, "  \t\t\t\t%s\n", slotRuler(gpu.MemorySlots))
		for _, p := range gpu.Profiles {
			for j, row := range placementRows(gpu.MemorySlots, p) {
				if j == 0 {
					textsafe.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\n", p.Name, p.ComputeSlices, p.MemorySlices, p.MaxInstances, row)
				} else {
					textsafe.Fprintf(tw, "  \t\t\t\t%s\n", row)
				}
			}
		}
	}
	return tw.Flush()
}

// placementRows draws every placement of profile p on a GPU of slots
// memory slots: as few rows as keep placements that overlap apart.
func placementRows(slots int, p mig.Profile) []string {
	var rows [][]mig.Instance
	var used []uint64
	for _, pl := range p.Placements {
		if pl.Start < 0 || pl.Size <= 0 || pl.End() > slots || pl.End() > 64 {
			continue
		}
		m := ((uint64(1) << pl.Size) - 1) << pl.Start
		r := slices.IndexFunc(used, func(u uint64) bool { return u&m == 0 })
		if r < 0 {
			r = len(rows)
			rows, used = append(rows, nil), append(used, 0)
		}
		rows[r] = append(rows[r], mig.Instance{Profile: p.Name, Placement: pl})
		used[r] |= m
	}
	out := make([]string, max(len(rows), 1))
	for i := range out {
		var row []mig.Instance
		if i < len(rows) {
			row = rows[i]
		}
		out[i] = DrawGPU(slots, row)
	}
	return out
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
	if err := tw.Flush(); err != nil {
		return err
	}
	return inventoryDrawings(w, nodes)
}

// inventoryDrawings draws the GPUs of each node whose model the catalog
// knows as MIG-capable, in their memory slots: GPUs that draw the same
// grouped, then nodes that draw the same.
func inventoryDrawings(w io.Writer, nodes []capacity.NodeInventory) error {
	var groups []*repartitionGroup
	byKey := map[string]*repartitionGroup{}
	for _, n := range nodes {
		var index []int
		var draws []string
		slots, solved := 0, false
		for _, l := range n.Layouts {
			if l.Slots > 0 {
				index, draws = append(index, l.Index), append(draws, drawLayout(l))
				slots, solved = max(slots, l.Slots), solved || l.Solved
			}
		}
		if len(index) == 0 {
			continue
		}
		note := ""
		if solved {
			note = "; placed from GPU Feature Discovery's counts"
		}
		labels, rows := gpuRows(index, draws)
		width := 0
		for _, l := range labels {
			width = max(width, len(l))
		}
		lines := []string{fmt.Sprintf("  %-*s  %s", width, "", slotRuler(slots))}
		for i, l := range labels {
			lines = append(lines, fmt.Sprintf("  %-*s  %s", width, l, rows[i][0]))
		}
		key := n.Model + "\n" + note + "\n" + strings.Join(lines, "\n")
		g := byKey[key]
		if g == nil {
			g = &repartitionGroup{model: n.Model, note: note, lines: lines}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.nodes = append(g.nodes, n.Node)
	}
	if len(groups) > 0 {
		textsafe.Fprintf(w, "\nMIG layouts: %s\n", migLegend)
	}
	for _, g := range groups {
		textsafe.Fprintf(w, "\n%s (%s, %s%s)\n", strings.Join(limit(g.nodes, maxNodesNamed), ", "), g.model, capacity.Count(len(g.nodes), "node"), g.note)
		for _, l := range g.lines {
			textsafe.Fprintf(w, "%s\n", l)
		}
	}
	return nil
}

// migSummary is "2 x 1g.10gb, 1 x 3g.40gb", "-" for none.
func migSummary(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(m))
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
