package render

import (
	"io"

	"github.com/gpuform/gpuform/engine/mig"
)

// The catalog's JSON (gpuform catalog -o json): snake_case names as every
// other JSON output of gpuform, and PCI device IDs as hex strings in the
// form NVML and mig-parted's device filters print ("0x20B510DE").
type (
	catalogJSON struct {
		GPUs []catalogGPU `json:"gpus"`
	}
	catalogGPU struct {
		Key           string           `json:"key"`
		Aliases       []string         `json:"aliases"`
		Name          string           `json:"name"`
		PCIDeviceIDs  []string         `json:"pci_device_ids"`
		MemoryMiB     int              `json:"memory_mib"`
		MIG           bool             `json:"mig"`
		MemorySlots   int              `json:"memory_slots"`
		ComputeSlices int              `json:"compute_slices"`
		Profiles      []catalogProfile `json:"profiles"`
	}
	catalogProfile struct {
		Name            string             `json:"name"`
		ComputeSlices   int                `json:"compute_slices"`
		MemorySlices    int                `json:"memory_slices"`
		MemoryMiB       int                `json:"memory_mib"`
		MaxInstances    int                `json:"max_instances"`
		Placements      []catalogPlacement `json:"placements"`
		MediaExtensions bool               `json:"media_extensions"`
		Variant         string             `json:"variant,omitempty"`
	}
	catalogPlacement struct {
		Start int `json:"start"`
		Size  int `json:"size"`
	}
)

// CatalogJSON writes the GPU catalog as JSON.
func CatalogJSON(w io.Writer, gpus []*mig.GPU) error {
	out := catalogJSON{GPUs: make([]catalogGPU, 0, len(gpus))}
	for _, g := range gpus {
		cg := catalogGPU{Key: g.Key, Aliases: nonNil(g.Aliases), Name: g.Name, PCIDeviceIDs: []string{}, MemoryMiB: g.MemoryMiB,
			MIG: g.MIG, MemorySlots: g.MemorySlots, ComputeSlices: g.ComputeSlices, Profiles: []catalogProfile{}}
		for _, id := range g.PCIDeviceIDs {
			cg.PCIDeviceIDs = append(cg.PCIDeviceIDs, mig.FormatPCIDeviceID(id))
		}
		for _, p := range g.Profiles {
			cp := catalogProfile{Name: p.Name, ComputeSlices: p.ComputeSlices, MemorySlices: p.MemorySlices, MemoryMiB: p.MemoryMiB,
				MaxInstances: p.MaxInstances, Placements: []catalogPlacement{}, MediaExtensions: p.MediaExtensions, Variant: p.Variant}
			for _, pl := range p.Placements {
				cp.Placements = append(cp.Placements, catalogPlacement{Start: pl.Start, Size: pl.Size})
			}
			cg.Profiles = append(cg.Profiles, cp)
		}
		out.GPUs = append(out.GPUs, cg)
	}
	return JSONValue(w, out)
}

// nonNil is s, or an empty list for nil (JSON [] rather than null).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
