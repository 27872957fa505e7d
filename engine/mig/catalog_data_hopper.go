package mig

// Sources as in catalog_data.go: the NVIDIA Multi-Instance GPU User Guide
// ("Supported GPUs", "Supported MIG Profiles") and the GPU Operator's
// default mig-parted configuration (assets/state-mig-manager/0400_configmap.yaml
// at the version testdata/crds/go.mod pins), whose named configs give the
// profile names and maximum counts and whose device filters give the PCI
// device IDs.

// NVIDIA Multi-Instance GPU User Guide, section 'Supported GPUs' ('H100 on
// GH200' and 'H20', 96GB, 7 instances) and section 'Supported MIG
// Profiles' (the H100 96GB product: the H100 shape with the 96GB names);
// the GPU Operator's default configuration lists the profiles (configs
// all-1g.12gb ... all-7g.96gb) and the device IDs of its filter 'H100-96GB,
// PG506-96GB, GH200, H20' (PG506-96GB is its own entry).
func h100With96GB() *GPU {
	return &GPU{
		Key: "H100-96GB",
		Aliases: []string{
			"NVIDIA GH200 480GB", "NVIDIA GH200 120GB", "NVIDIA GH200 96GB HBM3",
			"NVIDIA H100 96GB HBM3", "NVIDIA H20",
		},
		// GH200 (96GB), H100 96GB, H20.
		PCIDeviceIDs: []uint32{0x234210DE, 0x233D10DE, 0x232910DE},
		Name:         "NVIDIA H100 96GB (GH200, H20)",
		// 96 GiB less the driver's reserve, as on the other Hopper boards:
		// an estimate, not from an NVIDIA table (docs/gpus.md).
		MemoryMiB:     97871,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(12, 24, 48, 96),
	}
}

// The PG506-96GB board of the GPU Operator's default configuration: its
// device filter 'H100-96GB, PG506-96GB, GH200, H20' gives it the H100 96GB
// layouts (all-balanced: 1g.12gb x2, 2g.24gb, 3g.48gb). The MIG user guide
// has no table for it; the memory is the nominal 96 GiB.
func pg506With96GB() *GPU {
	return &GPU{
		Key:           "PG506-96GB",
		Aliases:       []string{"NVIDIA PG506-96GB", "NVIDIA PG506 96GB"},
		PCIDeviceIDs:  []uint32{0x20B610DE},
		Name:          "NVIDIA PG506 96GB",
		MemoryMiB:     98304,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(12, 24, 48, 96),
	}
}

// The GH200 144G HBM3e: the GPU Operator's default configuration (filter
// 'GH200 144G HBM3e', configs all-1g.18gb ... all-7g.144gb, all-balanced
// 1g.18gb x2, 2g.36gb, 3g.72gb); the H200 shape with 144GB names. Memory:
// the 153,008,209,920 bytes CUDA reports on one (145920 MiB).
func gh200With144GB() *GPU {
	return &GPU{
		Key:           "GH200-144GB",
		Aliases:       []string{"NVIDIA GH200 144G HBM3e", "NVIDIA-GH200-144G-HBM3e"},
		PCIDeviceIDs:  []uint32{0x234810DE},
		Name:          "NVIDIA GH200 144GB",
		MemoryMiB:     145920,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(18, 36, 72, 144),
	}
}
