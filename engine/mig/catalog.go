// Package mig is gpuform's GPU catalog and MIG placement solver.
//
// The catalog describes, per GPU model, the Multi-Instance GPU profiles with
// their compute and memory slices, their maximum instance counts and the
// memory-slot placements the hardware allows. Solve proves a layout valid by
// finding one placement per instance, or explains which constraint fails.
//
// The package uses only the standard library and keeps no mutable state:
// every call to Default builds a fresh catalog the caller may keep or change.
package mig

import (
	"fmt"
	"strconv"
	"strings"
)

// GPU is one catalog entry: a GPU model and, when it supports MIG, its profiles.
type GPU struct {
	// Key is the catalog key, e.g. "A100-80GB".
	Key string
	// Aliases are other names of the model: GPU Feature Discovery product
	// names ("NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe", ...) and the
	// names NVML reports ("NVIDIA A100-SXM4-80GB", ...).
	Aliases []string
	// Name is the marketing name, e.g. "NVIDIA A100 80GB".
	Name string
	// PCIDeviceIDs are the PCI device IDs of the model's boards as NVML
	// reports them (nvmlPciInfo_t.pciDeviceId: the device ID in the high 16
	// bits, NVIDIA's vendor ID 0x10DE in the low 16), e.g. 0x233010DE, the
	// form the GPU Operator's mig-parted device filters use. Lookup and
	// LookupPCI match them, so a board whose name the catalog does not list
	// (an H800, a new PCIe variant) is still recognised.
	PCIDeviceIDs []uint32
	// MemoryMiB is the total GPU memory as NVML reports it (memory.total).
	MemoryMiB int
	// MIG is false for models that only share by time-slicing (L4, L40S, T4).
	MIG bool
	// MemorySlots is the number of memory slices placements are made on
	// (8 on A100/H100/H200/B200, 4 on A30); 0 when MIG is false.
	MemorySlots int
	// ComputeSlices is the number of compute slices (7 on A100/H100/H200/B200,
	// 4 on A30); 0 when MIG is false.
	ComputeSlices int
	// Profiles are the MIG profiles in catalog order (smallest first).
	Profiles []Profile
}

// Profile is one MIG GPU-instance profile of a GPU model.
type Profile struct {
	// Name is the profile name as nvidia-smi and mig-parted spell it, e.g.
	// "1g.10gb", "1g.10gb+me", "7g.80gb".
	Name string
	// ComputeSlices is the number of compute slices one instance uses.
	ComputeSlices int
	// MemorySlices is the number of memory slots one instance occupies (the
	// placement size).
	MemorySlices int
	// MemoryMiB is the nominal memory of one instance (the size in the
	// profile name), informational.
	MemoryMiB int
	// MaxInstances is the most instances of this profile one GPU holds.
	MaxInstances int
	// Placements are every allowed start slot, each with its size.
	Placements []Placement
	// MediaExtensions is true for the "+me" and "+me.all" profiles, which
	// own the GPU's one optical-flow accelerator (and, for "+me.all", every
	// media engine); at most one such instance fits on a GPU.
	MediaExtensions bool
	// Variant is the profile's suffix: "" (the plain profile), VariantME,
	// VariantMEAll, VariantNoME or VariantGFX.
	Variant string `json:",omitempty"`
}

// Profile variants: the suffixes of MIG profile names (NVIDIA Multi-Instance
// GPU User Guide, "Supported MIG Profiles", "Profile References").
const (
	// VariantME ("+me") includes the media engines of its share and the
	// GPU's one optical-flow accelerator.
	VariantME = "+me"
	// VariantMEAll ("+me.all") allocates every media engine of the GPU.
	VariantMEAll = "+me.all"
	// VariantNoME ("-me") has no media engine: compute only.
	VariantNoME = "-me"
	// VariantGFX ("+gfx") adds graphics APIs (Blackwell GB20x, RTX PRO).
	VariantGFX = "+gfx"
)

// Placement is a range of memory slots: Size slots from Start.
type Placement struct{ Start, Size int }

// End is the first slot after the placement.
func (p Placement) End() int { return p.Start + p.Size }

// Catalog holds the GPU models.
type Catalog struct {
	gpus  []*GPU
	index map[string]*GPU
	pci   map[uint32]*GPU
}

// Default returns the built-in catalog. Each call returns a new value, so the
// caller owns it.
func Default() *Catalog {
	return newCatalog(builtinGPUs())
}

func newCatalog(gpus []*GPU) *Catalog {
	c := &Catalog{gpus: gpus, index: make(map[string]*GPU), pci: make(map[uint32]*GPU)}
	for _, g := range gpus {
		for _, id := range g.PCIDeviceIDs {
			c.pci[id] = g
		}
		c.index[normalizeName(g.Key)] = g
		for _, a := range g.Aliases {
			c.index[normalizeName(a)] = g
		}
	}
	return c
}

// GPUs returns the catalog's GPU models in a stable order: Ampere, Hopper,
// Blackwell, then the time-slicing-only models (see builtinGPUs).
func (c *Catalog) GPUs() []*GPU {
	out := make([]*GPU, len(c.gpus))
	copy(out, c.gpus)
	return out
}

// Lookup finds a GPU model by catalog key or alias, case-insensitively.
// Spaces, hyphens and underscores are interchangeable, so the name NVML
// reports ("NVIDIA H100 80GB HBM3") and the GPU Feature Discovery product
// label ("NVIDIA-H100-80GB-HBM3") both match. The suffixes GPU Feature
// Discovery appends to the product label ("-MIG-1g.10gb" under the single
// MIG strategy, "-SHARED" with renamed shared resources) are ignored. A
// PCI device ID written as ParsePCIDeviceID reads it ("0x2330",
// "0x233010DE", "10de:2330") finds the model of that board.
func (c *Catalog) Lookup(name string) (*GPU, bool) {
	n := normalizeName(name)
	if n == "" {
		return nil, false
	}
	if g, ok := c.index[n]; ok {
		return g, true
	}
	if id, ok := ParsePCIDeviceID(n); ok {
		return c.LookupPCI(id)
	}
	stripped := n
	if i := strings.Index(stripped, "-mig-"); i > 0 {
		stripped = stripped[:i]
	}
	stripped = strings.TrimSuffix(stripped, "-shared")
	if stripped != n {
		if g, ok := c.index[stripped]; ok {
			return g, true
		}
	}
	return nil, false
}

// LookupPCI finds the GPU model of a PCI device ID in NVML's form
// (0x233010DE: device ID, then vendor ID). An ID whose low 16 bits are 0 is
// read as the device ID alone (0x23300000 or, from ParsePCIDeviceID, a bare
// device ID).
func (c *Catalog) LookupPCI(id uint32) (*GPU, bool) {
	if id&0xFFFF == 0 {
		id |= nvidiaVendorID
	}
	g, ok := c.pci[id]
	return g, ok
}

// nvidiaVendorID is NVIDIA's PCI vendor ID.
const nvidiaVendorID = 0x10DE

// ParsePCIDeviceID reads an NVIDIA PCI device ID: "0x233010DE" (NVML's
// form and mig-parted's device filters), "0x2330" (the device ID alone) or
// "10de:2330" (lspci's vendor:device), case-insensitively. It returns the
// ID in NVML's form.
func ParsePCIDeviceID(s string) (uint32, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	var hex string
	switch {
	case strings.HasPrefix(s, "10de:"):
		hex = strings.TrimPrefix(s, "10de:")
		if len(hex) != 4 {
			return 0, false
		}
	case strings.HasPrefix(s, "0x"):
		hex = strings.TrimPrefix(s, "0x")
		if len(hex) == 8 {
			if !strings.HasSuffix(hex, "10de") {
				return 0, false
			}
			hex = hex[:4]
		} else if len(hex) != 4 {
			return 0, false
		}
	default:
		return 0, false
	}
	dev, err := strconv.ParseUint(hex, 16, 16)
	if err != nil || dev == 0 {
		return 0, false
	}
	return uint32(dev)<<16 | nvidiaVendorID, true
}

// FormatPCIDeviceID writes a PCI device ID in NVML's form, "0x233010DE".
func FormatPCIDeviceID(id uint32) string {
	return fmt.Sprintf("0x%08X", id)
}

// Key returns the catalog key of the GPU a product name names (as Lookup
// matches it), or the name as it is when the catalog does not know it.
func (c *Catalog) Key(name string) string {
	if g, ok := c.Lookup(name); ok {
		return g.Key
	}
	return name
}

// normalizeName folds case and treats spaces and underscores as hyphens.
func normalizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' {
			return '-'
		}
		return r
	}, s)
}

// Profile finds a MIG profile of g by name, case-insensitively.
func (g *GPU) Profile(name string) (*Profile, bool) {
	if g == nil {
		return nil, false
	}
	for i := range g.Profiles {
		if g.Profiles[i].Name == name {
			return &g.Profiles[i], true
		}
	}
	for i := range g.Profiles {
		if strings.EqualFold(g.Profiles[i].Name, name) {
			return &g.Profiles[i], true
		}
	}
	return nil, false
}

// Slices returns the profile counts of a layout entry by the catalog's
// profile names (one the catalog does not know as it is), counts of 0 left
// out: what Solve and Relayout are given.
func (g *GPU) Slices(slices map[string]int) map[string]int {
	out := map[string]int{}
	for name, k := range slices {
		if k == 0 {
			continue
		}
		if prof, ok := g.Profile(name); ok {
			name = prof.Name
		}
		out[name] += k
	}
	return out
}

// ProfileNames returns the names of g's MIG profiles in catalog order; nil
// when g has no MIG.
func (g *GPU) ProfileNames() []string {
	if g == nil || len(g.Profiles) == 0 {
		return nil
	}
	names := make([]string, len(g.Profiles))
	for i, p := range g.Profiles {
		names[i] = p.Name
	}
	return names
}
