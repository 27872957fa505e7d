package mig

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
// GPU memory totals are what NVML reports for the model, approximately;
// profile memory is the nominal size in the profile name.

// builtinGPUs returns new GPU values in catalog order.
func builtinGPUs() []*GPU {
	return []*GPU{
		a30(),
		a100With40GB(),
		a100With80GB(),
		h100With80GB(),
		h100With94GB(),
		h200(),
		b200(),
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

// me marks a profile as one with media extensions.
func me(p Profile) Profile {
	p.MediaExtensions = true
	return p
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'A30 profiles' (A30-24GB: 4 memory slots, 4 compute slices).
func a30() *GPU {
	return &GPU{
		Key:           "A30-24GB",
		Aliases:       []string{"NVIDIA-A30", "NVIDIA A30", "NVIDIA-A30-PCIE-24GB"},
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
		},
		Name:          "NVIDIA A100 40GB",
		MemoryMiB:     40960,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles: []Profile{
			prof("1g.5gb", 1, 1, 5, 7, 0, 1, 2, 3, 4, 5, 6),
			me(prof("1g.5gb+me", 1, 1, 5, 1, 0, 1, 2, 3, 4, 5, 6)),
			prof("1g.10gb", 1, 2, 10, 4, 0, 2, 4, 6),
			prof("2g.10gb", 2, 2, 10, 3, 0, 2, 4),
			prof("3g.20gb", 3, 4, 20, 2, 0, 4),
			prof("4g.20gb", 4, 4, 20, 1, 0),
			prof("7g.40gb", 7, 8, 40, 1, 0),
		},
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
		},
		Name:          "NVIDIA A100 80GB",
		MemoryMiB:     81920,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles: []Profile{
			prof("1g.10gb", 1, 1, 10, 7, 0, 1, 2, 3, 4, 5, 6),
			me(prof("1g.10gb+me", 1, 1, 10, 1, 0, 1, 2, 3, 4, 5, 6)),
			prof("1g.20gb", 1, 2, 20, 4, 0, 2, 4, 6),
			prof("2g.20gb", 2, 2, 20, 3, 0, 2, 4),
			prof("3g.40gb", 3, 4, 40, 2, 0, 4),
			prof("4g.40gb", 4, 4, 40, 1, 0),
			prof("7g.80gb", 7, 8, 80, 1, 0),
		},
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
		},
		Name:          "NVIDIA H100 80GB",
		MemoryMiB:     81559,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles: []Profile{
			prof("1g.10gb", 1, 1, 10, 7, 0, 1, 2, 3, 4, 5, 6),
			me(prof("1g.10gb+me", 1, 1, 10, 1, 0, 1, 2, 3, 4, 5, 6)),
			prof("1g.20gb", 1, 2, 20, 4, 0, 2, 4, 6),
			prof("2g.20gb", 2, 2, 20, 3, 0, 2, 4),
			prof("3g.40gb", 3, 4, 40, 2, 0, 4),
			prof("4g.40gb", 4, 4, 40, 1, 0),
			prof("7g.80gb", 7, 8, 80, 1, 0),
		},
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'H100 profiles' (H100 NVL and H100-SXM5 94GB).
func h100With94GB() *GPU {
	return &GPU{
		Key:           "H100-94GB",
		Aliases:       []string{"NVIDIA-H100-NVL", "NVIDIA H100 NVL"},
		Name:          "NVIDIA H100 94GB",
		MemoryMiB:     95830,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles: []Profile{
			prof("1g.12gb", 1, 1, 12, 7, 0, 1, 2, 3, 4, 5, 6),
			me(prof("1g.12gb+me", 1, 1, 12, 1, 0, 1, 2, 3, 4, 5, 6)),
			prof("1g.24gb", 1, 2, 24, 4, 0, 2, 4, 6),
			prof("2g.24gb", 2, 2, 24, 3, 0, 2, 4),
			prof("3g.47gb", 3, 4, 47, 2, 0, 4),
			prof("4g.47gb", 4, 4, 47, 1, 0),
			prof("7g.94gb", 7, 8, 94, 1, 0),
		},
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
		Name:          "NVIDIA H200 141GB",
		MemoryMiB:     143771,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles: []Profile{
			prof("1g.18gb", 1, 1, 18, 7, 0, 1, 2, 3, 4, 5, 6),
			me(prof("1g.18gb+me", 1, 1, 18, 1, 0, 1, 2, 3, 4, 5, 6)),
			prof("1g.35gb", 1, 2, 35, 4, 0, 2, 4, 6),
			prof("2g.35gb", 2, 2, 35, 3, 0, 2, 4),
			prof("3g.71gb", 3, 4, 71, 2, 0, 4),
			prof("4g.71gb", 4, 4, 71, 1, 0),
			prof("7g.141gb", 7, 8, 141, 1, 0),
		},
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
		Name:          "NVIDIA B200 180GB",
		MemoryMiB:     183359,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles: []Profile{
			prof("1g.23gb", 1, 1, 23, 7, 0, 1, 2, 3, 4, 5, 6),
			me(prof("1g.23gb+me", 1, 1, 23, 1, 0, 1, 2, 3, 4, 5, 6)),
			prof("1g.45gb", 1, 2, 45, 4, 0, 2, 4, 6),
			prof("2g.45gb", 2, 2, 45, 3, 0, 2, 4),
			prof("3g.90gb", 3, 4, 90, 2, 0, 4),
			prof("4g.90gb", 4, 4, 90, 1, 0),
			prof("7g.180gb", 7, 8, 180, 1, 0),
		},
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
