package mig

import "strconv"

// The tables below come from the NVIDIA Multi-Instance GPU User Guide,
// section "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html):
// profile names, fractions of memory and compute, and instance counts. The
// placements (start slot and size) are the ones `nvidia-smi mig -lgipp`
// lists for each profile, as drawn in the guide's profile diagrams. Profile
// names of H100-94GB, H200-141GB and B200-180GB are cross-checked against
// the GPU Operator's default mig-parted configuration
// (NVIDIA/gpu-operator assets/state-mig-manager/0400_configmap.yaml).
//
// The PCI device IDs are those of the device filters of that file (pinned
// in testdata/crds/go.mod; engine/mig's TestNVIDIADefaultConfig reads it),
// whose comments name the boards. GPU memory totals are what NVML reports
// for the model (memory.total in MiB); profile memory is the nominal size
// in the profile name.

// builtinGPUs returns new GPU values in catalog order.
func builtinGPUs() []*GPU {
	return []*GPU{
		a30(),
		a100With40GB(),
		a100With80GB(),
		pg506With96GB(),
		h100With80GB(),
		h100With94GB(),
		h100With96GB(),
		h200(),
		gh200With144GB(),
		b200(),
		gb200(),
		rtxPro6000(),
		l4(),
		l40S(),
		t4(),
	}
}

// prof builds a profile whose placements start at the given slots, each
// MemorySlices wide.
func prof(name string, compute, memSlices, memGB, maxInstances int, starts ...int) Profile {
	p := Profile{
		Name:          name,
		ComputeSlices: compute,
		MemorySlices:  memSlices,
		MemoryMiB:     memGB * 1024,
		MaxInstances:  maxInstances,
		Placements:    make([]Placement, len(starts)),
	}
	for i, s := range starts {
		p.Placements[i] = Placement{Start: s, Size: memSlices}
	}
	return p
}

// eightSlotProfiles are the profiles of the GPUs with 8 memory slots and 7
// compute slices (A100, H100, H200, B200), which share one shape: the
// guide's tables differ only in the memory sizes in the names, given here as
// GB of one, two, four and eight memory slots.
func eightSlotProfiles(one, two, four, eight int) []Profile {
	gb := func(n int) string { return strconv.Itoa(n) + "gb" }
	return []Profile{
		prof("1g."+gb(one), 1, 1, one, 7, 0, 1, 2, 3, 4, 5, 6),
		me(prof("1g."+gb(one)+"+me", 1, 1, one, 1, 0, 1, 2, 3, 4, 5, 6)),
		prof("1g."+gb(two), 1, 2, two, 4, 0, 2, 4, 6),
		prof("2g."+gb(two), 2, 2, two, 3, 0, 2, 4),
		prof("3g."+gb(four), 3, 4, four, 2, 0, 4),
		prof("4g."+gb(four), 4, 4, four, 1, 0),
		prof("7g."+gb(eight), 7, 8, eight, 1, 0),
	}
}

// me marks a profile as one with media extensions ("+me").
func me(p Profile) Profile {
	p.MediaExtensions, p.Variant = true, VariantME
	return p
}

// meAll marks a profile as one with every media engine ("+me.all"); it
// also holds the GPU's one optical-flow accelerator, as a "+me" does.
func meAll(p Profile) Profile {
	p.MediaExtensions, p.Variant = true, VariantMEAll
	return p
}

// noME marks a profile as one without media engines ("-me").
func noME(p Profile) Profile {
	p.Variant = VariantNoME
	return p
}

// gfx marks a profile as one with graphics ("+gfx").
func gfx(p Profile) Profile {
	p.Variant = VariantGFX
	return p
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'A30 profiles' (A30-24GB: 4 memory slots, 4 compute slices).
func a30() *GPU {
	return &GPU{
		Key:           "A30-24GB",
		Aliases:       []string{"NVIDIA-A30", "NVIDIA A30", "NVIDIA-A30-PCIE-24GB"},
		PCIDeviceIDs:  []uint32{0x20B710DE},
		Name:          "NVIDIA A30",
		MemoryMiB:     24576,
		MIG:           true,
		MemorySlots:   4,
		ComputeSlices: 4,
		Profiles: []Profile{
			prof("1g.6gb", 1, 1, 6, 4, 0, 1, 2, 3),
			me(prof("1g.6gb+me", 1, 1, 6, 1, 0, 1, 2, 3)),
			prof("2g.12gb", 2, 2, 12, 2, 0, 2),
			me(prof("2g.12gb+me", 2, 2, 12, 1, 0, 2)),
			prof("4g.24gb", 4, 4, 24, 1, 0),
		},
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'A100 profiles' (A100-SXM4-40GB: 8 memory slots, 7 compute slices).
func a100With40GB() *GPU {
	return &GPU{
		Key: "A100-40GB",
		Aliases: []string{
			"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB",
			"NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB",
			// go-nvml's simulated DGX A100 (pkg/nvml/mock/dgxa100).
			"Mock NVIDIA A100-SXM4-40GB",
			"NVIDIA A800-SXM4-40GB", "NVIDIA A800 40GB PCIe",
		},
		// A100-SXM4-40GB, A100-PCIE-40GB (two boards), A800 40GB PCIe.
		PCIDeviceIDs:  []uint32{0x20B010DE, 0x20B110DE, 0x20F110DE, 0x20F610DE},
		Name:          "NVIDIA A100 40GB",
		MemoryMiB:     40960,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(5, 10, 20, 40),
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'A100 profiles' (A100-SXM4-80GB: the A100-40GB shape with the 80GB
// profile names).
func a100With80GB() *GPU {
	return &GPU{
		Key: "A100-80GB",
		Aliases: []string{
			"NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe",
			"NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe",
			"NVIDIA A100-PCIE-80GB",
			"NVIDIA A800-SXM4-80GB", "NVIDIA A800 80GB PCIe",
		},
		// A100-SXM4-80GB, A100 80GB PCIe, A800-SXM4-80GB, A800 80GB PCIe.
		PCIDeviceIDs:  []uint32{0x20B210DE, 0x20B510DE, 0x20F310DE, 0x20F510DE},
		Name:          "NVIDIA A100 80GB",
		MemoryMiB:     81920,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(10, 20, 40, 80),
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'H100 profiles' (H100-SXM5-80GB, H100-PCIE-80GB).
func h100With80GB() *GPU {
	return &GPU{
		Key: "H100-80GB",
		Aliases: []string{
			"NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-PCIe",
			"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe",
			"NVIDIA H800", "NVIDIA H800 PCIe",
		},
		// H100 SXM5 80GB, H100 PCIe, H800 PCIe, H800 (SXM5).
		PCIDeviceIDs: []uint32{0x233010DE, 0x233110DE, 0x232210DE, 0x232410DE},
		Name:         "NVIDIA H100 80GB",
		// 80 GiB less what the driver reserves: nvidia-smi and NVML report
		// 81559 MiB on an H100 80GB HBM3 (go-nvml's simulated H100 says
		// 81920, the nominal size; providers/nvml's simulated server reports
		// this figure instead).
		MemoryMiB:     81559,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(10, 20, 40, 80),
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'H100 profiles' (H100 NVL and H100-SXM5 94GB).
func h100With94GB() *GPU {
	return &GPU{
		Key:           "H100-94GB",
		Aliases:       []string{"NVIDIA-H100-NVL", "NVIDIA H100 NVL", "NVIDIA H800 NVL"},
		PCIDeviceIDs:  []uint32{0x232110DE, 0x233A10DE}, // H100 NVL, H800 NVL
		Name:          "NVIDIA H100 94GB",
		MemoryMiB:     95830,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(12, 24, 47, 94),
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'H200 profiles' (H200-SXM5 141GB, H200 NVL).
func h200() *GPU {
	return &GPU{
		Key: "H200-141GB",
		Aliases: []string{
			"NVIDIA-H200", "NVIDIA-H200-141GB-HBM3", "NVIDIA-H200-NVL",
			"NVIDIA H200", "NVIDIA H200 NVL",
			// go-nvml's simulated DGX H200 (pkg/nvml/mock/dgxh200).
			"NVIDIA H200 141GB HBM3e",
		},
		PCIDeviceIDs:  []uint32{0x233510DE, 0x233B10DE}, // H200 SXM5, H200 NVL
		Name:          "NVIDIA H200 141GB",
		MemoryMiB:     143771,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(18, 35, 71, 141),
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'B200 profiles' (B200 180GB).
func b200() *GPU {
	return &GPU{
		Key: "B200-180GB",
		Aliases: []string{
			"NVIDIA-B200", "NVIDIA B200",
			// go-nvml's simulated DGX B200 (pkg/nvml/mock/dgxb200).
			"NVIDIA B200 180GB HBM3e",
		},
		PCIDeviceIDs:  []uint32{0x290110DE},
		Name:          "NVIDIA B200 180GB",
		MemoryMiB:     183359,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(23, 45, 90, 180),
	}
}

// NVIDIA L4: no MIG (NVIDIA Multi-Instance GPU User Guide, section
// 'Supported GPUs' does not list it); shared by time-slicing only.
func l4() *GPU {
	return &GPU{
		Key:       "L4",
		Aliases:   []string{"NVIDIA-L4", "NVIDIA L4"},
		Name:      "NVIDIA L4",
		MemoryMiB: 23034,
	}
}

// NVIDIA L40S: no MIG (not in the guide's 'Supported GPUs'); time-slicing only.
func l40S() *GPU {
	return &GPU{
		Key:       "L40S",
		Aliases:   []string{"NVIDIA-L40S", "NVIDIA L40S"},
		Name:      "NVIDIA L40S",
		MemoryMiB: 46068,
	}
}

// NVIDIA T4: no MIG (not in the guide's 'Supported GPUs'); time-slicing only.
func t4() *GPU {
	return &GPU{
		Key:       "T4",
		Aliases:   []string{"Tesla-T4", "NVIDIA-T4", "Tesla T4", "NVIDIA T4"},
		Name:      "NVIDIA T4",
		MemoryMiB: 15360,
	}
}
