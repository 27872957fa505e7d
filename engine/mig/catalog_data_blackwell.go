package mig

// Sources as in catalog_data.go and catalog_data_hopper.go.

// NVIDIA Multi-Instance GPU User Guide, section 'Supported GPUs' (GB200,
// 186GB, 7 instances); the GPU Operator's default configuration (filter
// 'GB200 HGX', all-balanced 1g.23gb x2, 2g.47gb, 3g.93gb; configs
// all-1g.23gb, all-1g.23gb.me, all-1g.47gb, all-2g.47gb, all-3g.93gb,
// all-4g.93gb, all-7g.186gb). Memory: 189471 MiB, as NVML reports on a
// GB200 (PCI device 0x294110DE).
func gb200() *GPU {
	return &GPU{
		Key:           "GB200-186GB",
		Aliases:       []string{"NVIDIA GB200", "NVIDIA-GB200"},
		PCIDeviceIDs:  []uint32{0x294110DE},
		Name:          "NVIDIA GB200 186GB",
		MemoryMiB:     189471,
		MIG:           true,
		MemorySlots:   8,
		ComputeSlices: 7,
		Profiles:      eightSlotProfiles(23, 47, 93, 186),
	}
}

// NVIDIA Multi-Instance GPU User Guide, section 'Supported MIG Profiles',
// table 'GPU Instance Profiles on RTX PRO 6000' (Server, Workstation and
// Max-Q Workstation Editions, 96GB): 4 memory slots and 4 compute slices,
// profiles with graphics (+gfx), without media engines (-me) and with every
// media engine (+me.all); placements as `nvidia-smi mig -lgipp` lists them
// ({0,1,2,3}:1, {0,2}:2, {0}:4). The GPU Operator's default configuration
// names its device ID (filter 'RTX-PRO-6000-96GB', all-balanced 1g.24gb x2,
// 2g.48gb). Memory: 97887 MiB, an NVML reading reported for the Server
// Edition, not from an NVIDIA table (docs/gpus.md).
func rtxPro6000() *GPU {
	return &GPU{
		Key: "RTX-PRO-6000-96GB",
		Aliases: []string{
			"NVIDIA RTX PRO 6000 Blackwell Server Edition",
			"NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
			"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
		},
		PCIDeviceIDs:  []uint32{0x2BB510DE},
		Name:          "NVIDIA RTX PRO 6000 Blackwell 96GB",
		MemoryMiB:     97887,
		MIG:           true,
		MemorySlots:   4,
		ComputeSlices: 4,
		Profiles: []Profile{
			prof("1g.24gb", 1, 1, 24, 4, 0, 1, 2, 3),
			me(prof("1g.24gb+me", 1, 1, 24, 1, 0, 1, 2, 3)),
			gfx(prof("1g.24gb+gfx", 1, 1, 24, 4, 0, 1, 2, 3)),
			meAll(prof("1g.24gb+me.all", 1, 1, 24, 1, 0, 1, 2, 3)),
			noME(prof("1g.24gb-me", 1, 1, 24, 4, 0, 1, 2, 3)),
			prof("2g.48gb", 2, 2, 48, 2, 0, 2),
			gfx(prof("2g.48gb+gfx", 2, 2, 48, 2, 0, 2)),
			meAll(prof("2g.48gb+me.all", 2, 2, 48, 1, 0, 2)),
			noME(prof("2g.48gb-me", 2, 2, 48, 2, 0, 2)),
			prof("4g.96gb", 4, 4, 96, 1, 0),
			gfx(prof("4g.96gb+gfx", 4, 4, 96, 1, 0)),
		},
	}
}
