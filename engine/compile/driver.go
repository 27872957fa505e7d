package compile

import (
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// driverImage is the NVIDIA driver container image an NVIDIADriver
// installs (the CRD's default of spec.image, which it requires): the GPU
// Operator appends the version and the node's OS.
const driverImage = "nvcr.io/nvidia/driver"

// driverPin is pool p's GPU Operator NVIDIADriver (nvidia.com/v1alpha1,
// gpu-operator v25.3.4, api/nvidia/v1alpha1/nvidiadriver_types.go) when
// the stack pins drivers (pin_drivers) and the pool's driver_version is
// one version (Validate refuses a range): named after the pool, it
// installs that version on the nodes of the pool's node selector. nil
// otherwise. The GPU Operator must manage drivers with the NVIDIADriver
// CRD (its Helm value driver.nvidiaDriverCRD.enabled=true).
func driverPin(s *config.Settings, p *config.Pool) *engine.Object {
	if !s.PinDrivers || p.DriverVersion == "" {
		return nil
	}
	op, _, err := config.ParseVersionConstraint(p.DriverVersion)
	if err != nil || op != "=" {
		return nil
	}
	o := newObject(engine.KindNVIDIADriver, "", p.Name, s.Stack, p.Address)
	o.Object["spec"] = map[string]any{
		"driverType":   "gpu",
		"image":        driverImage,
		"version":      strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p.DriverVersion), "=")),
		"nodeSelector": engine.AnyMap(p.NodeSelector),
	}
	return &engine.Object{Object: o, Sensitive: anySensitive(&p.Meta)}
}
