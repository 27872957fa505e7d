//go:build linux && cgo

package nvml

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuform/gpuform/engine/mig"
)

// TestSimulatedMemoryIsTheCatalogs: every GPU go-nvml simulates reads back
// with the memory the catalog gives (what NVML reports on the real board:
// 81559 MiB for an H100 80GB, where go-nvml's data says 81920) and with one
// of the catalog's PCI device IDs.
func TestSimulatedMemoryIsTheCatalogs(t *testing.T) {
	cat := mig.Default()
	for key := range simulatedModels() {
		g := mustGPU(t, key)
		lib, err := Simulated(cat, key, 2, "", "node-"+key)
		if err != nil {
			t.Fatal(err)
		}
		inv, err := Read(lib, cat)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		for _, d := range inv.GPUs {
			if d.MemoryMiB != g.MemoryMiB || d.Model != key {
				t.Errorf("%s: GPU %d reads as %s with %d MiB; the catalog says %d MiB", key, d.Index, d.Model, d.MemoryMiB, g.MemoryMiB)
			}
		}
		dev, _ := lib.DeviceGetHandleByIndex(0)
		if pci, ret := dev.GetPciInfo(); ret != nvml.SUCCESS || pci.PciDeviceId != g.PCIDeviceIDs[0] {
			t.Errorf("%s: PCI device ID %#x (%v), want %s", key, pci.PciDeviceId, ret, mig.FormatPCIDeviceID(g.PCIDeviceIDs[0]))
		}
	}
}

// TestModelByPCIDeviceID: a board whose name the catalog does not list (an
// A800, an H800) is recognised by its PCI device ID, and MIG applies to it.
func TestModelByPCIDeviceID(t *testing.T) {
	cat := mig.Default()
	tests := []struct {
		sim, name string
		pci       uint32
		want      string
	}{
		{"A100-80GB", "NVIDIA A800-SXM4-80GB Rev B", 0x20F310DE, "A100-80GB"},
		{"H100-80GB", "NVIDIA H800 SXM5", 0x232410DE, "H100-80GB"},
		{"H100-80GB", "NVIDIA H100 80GB HBM3 Engineering Sample", 0x233010DE, "H100-80GB"},
		{"H100-80GB", "NVIDIA H100 Unknown", 0x999910DE, ""},
	}
	for _, tt := range tests {
		lib, err := Simulated(cat, tt.sim, 1, "", "n")
		if err != nil {
			t.Fatal(err)
		}
		dev := lib.(*server.Server).Devices[0].(*server.Device)
		dev.Config.Name, dev.Config.PciDeviceId = tt.name, tt.pci
		inv, err := Read(lib, cat)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := inv.GPUs[0].Model; got != tt.want {
			t.Errorf("%s (%s): model %q, want %q", tt.name, mig.FormatPCIDeviceID(tt.pci), got, tt.want)
		}
	}
}

// TestProfileVariants: NVML's profile constants for graphics, no-media and
// all-media profiles name the catalog's +gfx, -me and +me.all profiles (an
// RTX PRO 6000's, as `nvidia-smi mig -lgip` lists them: 23.62 GiB per
// slice), and keep the suffix when the catalog has no such profile.
func TestProfileVariants(t *testing.T) {
	g := mustGPU(t, "RTX-PRO-6000-96GB")
	tests := []struct {
		id          int
		slices, mib uint32
		want        string
		known       bool
	}{
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 1, 24186, "1g.24gb", true},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, 1, 24186, "1g.24gb+me", true},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, 1, 24186, "1g.24gb+gfx", true},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, 1, 24186, "1g.24gb+me.all", true},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, 1, 24186, "1g.24gb-me", true},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE, 2, 48517, "2g.48gb", true},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX, 2, 48517, "2g.48gb+gfx", true},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME, 2, 48517, "2g.48gb+me.all", true},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME, 2, 48517, "2g.48gb-me", true},
		{nvml.GPU_INSTANCE_PROFILE_4_SLICE, 4, 97280, "4g.96gb", true},
		{nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX, 4, 97280, "4g.96gb+gfx", true},
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, 3, 72000, "3g.71gb+gfx", false},
	}
	for _, tt := range tests {
		name, known := profileName(g, tt.id, nvml.GpuInstanceProfileInfo{SliceCount: tt.slices, MemorySizeMB: uint64(tt.mib)})
		if name != tt.want || known != tt.known {
			t.Errorf("profile %d: %s (known %v), want %s (known %v)", tt.id, name, known, tt.want, tt.known)
		}
	}
	if name, known := profileName(mustGPU(t, "H100-80GB"), nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GpuInstanceProfileInfo{SliceCount: 1, MemorySizeMB: 9856}); known || name != "1g.10gb-me" {
		t.Errorf("H100 -me profile: %s (known %v), want 1g.10gb-me unknown", name, known)
	}
}
