package capacity

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpuform/gpuform/engine/mig"
)

// A DRA pool's node is drawn from what NVIDIA's DRA driver publishes of
// it, not from its labels: the driver names a whole GPU gpu-<minor> and a
// MIG device gpu-<parent minor>-mig-<GI profile ID>-<placement start>-
// <placement size> (cmd/gpu-kubelet-plugin, GpuInfo.CanonicalName and
// MigDeviceInfo.CanonicalName, at the tag slices.go cites), so the
// drawing has the GPU's index and each instance's placement. A MIG device
// named otherwise is placed by the solver from its GPU's counts (Solved),
// as GPU Feature Discovery's counts are.

// draLayouts is the layout of each physical GPU among devs (one node's
// devices), of model g, by index: whole GPUs with MIG off, MIG devices in
// their placements. A device that consumes its GPU's counters (the
// driver's dynamic MIG: a partition it could make) is no instance; a GPU
// with only such devices is Unknown.
func draLayouts(devs []DRADevice, g *mig.GPU) []GPULayout {
	var order []string
	byGPU := map[string][]DRADevice{}
	for _, d := range devs {
		if d.Type != DRATypeGPU && d.Type != DRATypeMIG {
			continue
		}
		if _, ok := byGPU[d.GPU]; !ok {
			order = append(order, d.GPU)
		}
		byGPU[d.GPU] = append(byGPU[d.GPU], d)
	}
	out := make([]GPULayout, 0, len(order))
	for i, id := range order {
		out = append(out, draGPULayout(byGPU[id], i, g))
	}
	slices.SortStableFunc(out, func(a, b GPULayout) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

// draGPULayout is one GPU's layout from its devices; ordinal is its index
// when no device's name gives one.
func draGPULayout(devs []DRADevice, ordinal int, g *mig.GPU) GPULayout {
	l := GPULayout{Index: ordinal, Slots: g.MemorySlots}
	counts := map[string]int{}
	placed := true
	indexed := false
	for _, d := range devs {
		var minor, profileID, start, size int
		switch d.Type {
		case DRATypeGPU:
			if _, err := fmt.Sscanf(d.Name, "gpu-%d", &minor); err == nil {
				l.Index, indexed = minor, true
			}
			continue
		case DRATypeMIG:
			if d.Partition {
				continue
			}
		}
		l.MIG = true
		counts[d.Profile]++
		n, _ := fmt.Sscanf(d.Name, "gpu-%d-mig-%d-%d-%d", &minor, &profileID, &start, &size)
		if n >= 1 && !indexed {
			l.Index, indexed = minor, true
		}
		if n == 4 {
			l.Instances = append(l.Instances, mig.Instance{Profile: d.Profile, Placement: mig.Placement{Start: start, Size: size}})
		} else {
			placed = false
		}
	}
	switch {
	case !l.MIG && slices.ContainsFunc(devs, func(d DRADevice) bool { return d.Partition }):
		l.Unknown = true
	case l.MIG && placed:
		slices.SortFunc(l.Instances, func(a, b mig.Instance) int { return cmp.Compare(a.Placement.Start, b.Placement.Start) })
	case l.MIG:
		inst, err := mig.Solve(g, counts)
		l.Instances, l.Solved, l.Unknown = inst, true, err != nil
	}
	return l
}
