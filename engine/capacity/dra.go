package capacity

import (
	"maps"
	"slices"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// DRA pools (config.PoolModeDRA) offer their GPUs through DeviceClasses of
// NVIDIA's DRA driver, not extended resources: one class for the pool's
// whole GPUs and one per MIG profile of its layout. A namespace's quota on
// one is the ResourceQuota resource DeviceClassQuota names.

// deviceClassQuotaSuffix is what a ResourceQuota's spec.hard key adds to a
// DeviceClass's name to count the devices claimed of that class
// (resource.k8s.io's per-class device quota).
const deviceClassQuotaSuffix = ".deviceclass.resource.k8s.io/devices"

// WholeGPUClass is the profile argument of DeviceClass for a pool's whole
// GPUs.
const WholeGPUClass = "gpu"

// DeviceClass is the name of the DeviceClass of stack's DRA pool pool for
// MIG profile profile, or for its whole GPUs when profile is WholeGPUClass:
// gpuform-<stack>-<pool>-<profile>, the profile's dots and plus signs as
// dashes ("1g.10gb+me" is "1g-10gb-me").
func DeviceClass(stack, pool, profile string) string {
	p := strings.NewReplacer(".", "-", "+", "-").Replace(strings.ToLower(profile))
	return "gpuform-" + stack + "-" + pool + "-" + p
}

// DeviceClassQuota is the ResourceQuota resource that counts the devices
// a namespace claims of DeviceClass class.
func DeviceClassQuota(class string) string { return class + deviceClassQuotaSuffix }

// IsDeviceClassQuota reports whether resource is a per-DeviceClass device
// quota, and the class it counts.
func IsDeviceClassQuota(resource string) (class string, ok bool) {
	return strings.CutSuffix(resource, deviceClassQuotaSuffix)
}

// draProfiles lists the DeviceClass profiles of DRA pool p: each MIG
// profile of its layout (WholeGPUClass too for a device group with MIG
// off), or WholeGPUClass alone without a layout.
func draProfiles(p *config.Pool) []string {
	set := map[string]bool{}
	switch {
	case p.MIGLayout != nil && len(p.MIGLayout.Devices) == 0:
		for prof := range p.MIGLayout.Slices {
			set[prof] = true
		}
	case p.MIGLayout != nil:
		for _, g := range p.MIGLayout.Devices {
			if !g.Enabled {
				set[WholeGPUClass] = true
				continue
			}
			for prof := range g.Slices {
				set[prof] = true
			}
		}
	default:
		set[WholeGPUClass] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// DeviceClasses maps the name of each DeviceClass of DRA pool p in stack
// to its profile (WholeGPUClass for whole GPUs); nil for a device-plugin
// pool.
func DeviceClasses(stack string, p *config.Pool) map[string]string {
	if !p.DRA() {
		return nil
	}
	out := map[string]string{}
	for _, prof := range draProfiles(p) {
		out[DeviceClass(stack, p.Name, prof)] = prof
	}
	return out
}

// draTotals is a pool's totals (poolTotals) by what its quotas name: for
// a DRA pool, each MIG profile's count as its DeviceClass's device quota,
// whole GPUs as the -gpu class's; a device-plugin pool's unchanged. The
// counts are the catalog's and the layout's, as for device-plugin pools:
// capacity from the driver's ResourceSlices is not read yet.
func draTotals(stack string, p *config.Pool, total map[string]int) map[string]int {
	if !p.DRA() {
		return total
	}
	out := make(map[string]int, len(total))
	for _, prof := range draProfiles(p) {
		r := mig.ResourceGPU
		if prof != WholeGPUClass {
			r = mig.Resource(prof)
		}
		if n, ok := total[r]; ok {
			out[DeviceClassQuota(DeviceClass(stack, p.Name, prof))] = n
		}
	}
	return out
}
