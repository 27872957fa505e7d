package mig

import "strings"

// ResourceGPU is the extended resource the NVIDIA device plugin advertises a
// whole GPU (or a time-slicing replica of one) as.
const ResourceGPU = "nvidia.com/gpu"

// Resource is the extended resource a MIG profile is advertised as by the
// NVIDIA device plugin's mixed strategy: nvidia.com/mig-1g.10gb, with "+"
// as ".".
func Resource(profile string) string {
	return "nvidia.com/mig-" + strings.ReplaceAll(profile, "+", ".")
}
