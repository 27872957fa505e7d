package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DriverPinWarnings warns, at each pool with a driver pin (an NVIDIADriver
// in d), when no ClusterPolicy of live manages drivers with NVIDIADrivers
// (spec.driver.useNvidiaDriverCRD true): the GPU Operator then keeps the
// ClusterPolicy's driver and leaves the NVIDIADriver unused (its
// controller reports it not enabled), so the pin would not reach the
// nodes. gpuform does not set the field: moving a cluster's drivers from
// the ClusterPolicy to NVIDIADrivers re-installs every node's driver, an
// operator's decision. A cluster without a ClusterPolicy serves no
// NVIDIADriver either: discovery reports the missing kind.
func DriverPinWarnings(d *Desired, live *Live) hcl.Diagnostics {
	if len(live.ClusterPolicies) == 0 {
		return nil
	}
	for _, cp := range live.ClusterPolicies {
		if on, _, _ := unstructured.NestedBool(cp.Object, "spec", "driver", "useNvidiaDriverCRD"); on {
			return nil
		}
	}
	var out hcl.Diagnostics
	for _, o := range d.Objects {
		// The kept key, not the object's maps: this reads every desired object.
		if k := o.Key(); k.Kind != KindNVIDIADriver.Kind || k.Group != KindNVIDIADriver.Group {
			continue
		}
		out = append(out, Warning(fmt.Sprintf("%s pins its driver with NVIDIADriver %s, but ClusterPolicy %s does not manage drivers with NVIDIADrivers (spec.driver.useNvidiaDriverCRD is not true), so the GPU Operator will not install it: run the GPU Operator with driver.nvidiaDriverCRD.enabled=true, or set pin_drivers = false", o.Address, o.Object.GetName(), live.ClusterPolicies[0].GetName()), o.Address))
	}
	return out
}
