//go:build linux && cgo

package nvml

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuform/gpuform/engine/mig"
)

// giProfile is a GPU instance profile a device offers.
type giProfile struct {
	// id is the NVML_GPU_INSTANCE_PROFILE_* constant it was queried with
	// (info.Id is the driver's own profile ID, which differs on real GPUs).
	id   int
	info nvml.GpuInstanceProfileInfo
	// name is the catalog profile name, or a name built from info when the
	// catalog has no such profile (known is false then).
	name  string
	known bool
}

// deviceProfiles lists the GPU instance profiles dev offers, named after
// the catalog profiles of g (nil: the GPU is not in the catalog).
func deviceProfiles(dev nvml.Device, g *mig.GPU) ([]giProfile, error) {
	var out []giProfile
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		info, ret := dev.GetGpuInstanceProfileInfo(id)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_NOT_FOUND:
			continue
		default:
			return nil, &callError{fmt.Sprintf("reading GPU instance profile %d", id), ret}
		}
		name, known := profileName(g, id, info)
		out = append(out, giProfile{id: id, info: info, name: name, known: known})
	}
	return out, nil
}

// profileName maps an NVML GPU instance profile to the catalog profile of g
// with the same compute slices and variant (media extensions "+me", every
// media engine "+me.all", none "-me", graphics "+gfx", or plain) and the
// nearest memory size (within a quarter: the catalog's sizes are nominal,
// NVML's a little smaller). A profile without a match is named from NVML's
// numbers, "<slices>g.<GiB>gb" plus the variant's suffix, with known false.
func profileName(g *mig.GPU, id int, info nvml.GpuInstanceProfileInfo) (string, bool) {
	variant := profileVariant(id)
	mem := int(info.MemorySizeMB)
	if g != nil && g.MIG {
		best, bestDiff := -1, 0
		for i, p := range g.Profiles {
			if p.ComputeSlices != int(info.SliceCount) || p.Variant != variant {
				continue
			}
			diff := p.MemoryMiB - mem
			if diff < 0 {
				diff = -diff
			}
			if diff*4 > p.MemoryMiB {
				continue
			}
			if best < 0 || diff < bestDiff {
				best, bestDiff = i, diff
			}
		}
		if best >= 0 {
			return g.Profiles[best].Name, true
		}
	}
	return fmt.Sprintf("%dg.%dgb%s", info.SliceCount, (mem+1023)/1024, variant), false
}

// profileVariant is the catalog variant of the NVML_GPU_INSTANCE_PROFILE_*
// constant id (nvml.h): "" for the plain profiles.
func profileVariant(id int) string {
	switch id {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		return mig.VariantME
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		return mig.VariantMEAll
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		return mig.VariantNoME
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
		nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		return mig.VariantGFX
	}
	return ""
}

// fullComputeProfile returns the compute instance profile of gi that uses
// all of its compute slices.
func fullComputeProfile(gi nvml.GpuInstance, slices uint32) (nvml.ComputeInstanceProfileInfo, error) {
	for cid := 0; cid < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; cid++ {
		cp, ret := gi.GetComputeInstanceProfileInfo(cid, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret == nvml.SUCCESS && cp.SliceCount == slices {
			return cp, nil
		}
	}
	return nvml.ComputeInstanceProfileInfo{}, fmt.Errorf("no compute instance profile uses all %d compute slices of the GPU instance", slices)
}
