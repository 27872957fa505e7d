package mig

import "strings"

// ResourceGPU is the extended resource the NVIDIA device plugin advertises a
// whole GPU (or a time-slicing replica of one) as.
const ResourceGPU = "nvidia.com/gpu"

// ResourceGPUShared is the resource the device plugin advertises the
// time-slicing or MPS replicas of a GPU as when its config sets
// renameByDefault: nvidia.com/gpu with the suffix ".shared".
const ResourceGPUShared = ResourceGPU + ".shared"

// Resource is the extended resource a MIG profile is advertised as by the
// NVIDIA device plugin's mixed strategy: nvidia.com/mig-1g.10gb, with "+"
// as ".".
func Resource(profile string) string {
	return "nvidia.com/mig-" + strings.ReplaceAll(profile, "+", ".")
}
