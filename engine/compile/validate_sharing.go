package compile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// maxMPSReplicas is the most MPS clients one GPU's MPS server takes, and so
// the most replicas the device plugin's MPS control daemon starts with:
// k8s-device-plugin v0.20.0, cmd/mps-control-daemon/mps/device.go,
// maxClients (48 from compute capability 7.5 on, every GPU of the catalog;
// 16 before) and assertReplicas ("maximum allowed replicas exceeded").
const maxMPSReplicas = 48

// sharing checks a pool's time_slicing or mps block against the NVIDIA
// device plugin (k8s-device-plugin v0.20.0): at least 2 replicas
// (api/config/v1/replicas.go, ReplicatedResource.UnmarshalJSON: "number
// of replicas must be >= 2"; the plugin then loads no config and the node
// offers no GPUs), at most maxMPSReplicas MPS replicas, one strategy per
// pool, and no MPS pool in a stack with MIG pools: gpuform then sets the
// GPU Operator's MIG strategy to mixed, which the plugin refuses with MPS
// (cmd/nvidia-device-plugin/main.go, validateFlags: "using
// --mig-strategy=mixed is not supported with MPS").
func (v *validator) sharing(p *config.Pool) {
	if ts := p.TimeSlicing; ts != nil && ts.Replicas < minTimeSlicingReplicas {
		v.errorf(ts.Range("replicas"), "Invalid time-slicing replicas", "replicas is %d, but the NVIDIA device plugin refuses a time-slicing config with fewer than %d replicas (\"number of replicas must be >= 2\"), so the pool's nodes would offer no GPUs; use %d or more, or remove time_slicing to share out whole GPUs.", ts.Replicas, minTimeSlicingReplicas, minTimeSlicingReplicas)
	}
	m := p.MPS
	if m == nil {
		return
	}
	switch {
	case m.Replicas < minTimeSlicingReplicas:
		v.errorf(m.Range("replicas"), "Invalid MPS replicas", "replicas is %d, but the NVIDIA device plugin refuses an MPS config with fewer than %d replicas (\"number of replicas must be >= 2\"), so the pool's nodes would offer no GPUs; use %d or more, or remove mps to share out whole GPUs.", m.Replicas, minTimeSlicingReplicas, minTimeSlicingReplicas)
	case m.Replicas > maxMPSReplicas:
		v.errorf(m.Range("replicas"), "Too many MPS replicas", "replicas is %d, but an MPS server takes at most %d clients per GPU, and the device plugin's MPS daemon refuses more (\"maximum allowed replicas exceeded\"); use at most %d.", m.Replicas, maxMPSReplicas, maxMPSReplicas)
	}
	switch {
	case p.TimeSlicing != nil:
		v.errorf(p.Range("mps"), "Conflicting GPU sharing", "A pool is shared by one strategy: time-slicing (time_slicing) or MPS (mps), not both; the device plugin would use MPS and ignore time_slicing. Remove one.")
	case p.MIGLayout != nil:
		v.errorf(p.Range("mps"), "Conflicting GPU sharing", "A pool is shared either by MIG (mig_layout) or by MPS (mps), not both; remove one.")
	default:
		for _, other := range v.cfg.Pools {
			if other.MIGLayout != nil {
				v.errorf(p.Range("mps"), "MPS beside MIG pools", "Pool %s shares its GPUs with MPS, but %s has a MIG layout, for which gpuform sets the GPU Operator's MIG strategy to mixed, and the NVIDIA device plugin refuses MPS under that strategy (\"using --mig-strategy=mixed is not supported with MPS\"). Use time_slicing on this pool, or keep MPS and MIG pools in separate clusters.", p.Name, other.Address)
				break
			}
		}
	}
}

// modelSharing refuses a model asking for more than one replica of a
// shared pool whose device plugin config fails such requests
// (failRequestsGreaterThanOne; internal/rm/rm.go, ValidateRequest:
// "maximum request size for shared resources is 1"): its pods would fail
// at admission to the node, every time.
func (v *validator) modelSharing(m *config.Model) {
	s := m.Pool.Shared()
	if s == nil || !s.FailRequestsGreaterThanOne || m.GPUs <= 1 {
		return
	}
	v.errorf(m.Range("gpus"), "More than one shared GPU", "gpus is %d, but pool %s shares its GPUs (%s) with fail_requests_greater_than_one, so the NVIDIA device plugin refuses a container that asks for more than one replica (\"maximum request size for shared resources is 1\"). Ask for gpus = 1, or set fail_requests_greater_than_one = false on the pool's %s block (the replicas may then land on one GPU).", m.GPUs, m.Pool.Name, m.Pool.Strategy(), m.Pool.Strategy())
}

// reservedEnvPrefixes are environment variable names a model may not set:
// the NVIDIA Container Toolkit reads NVIDIA_* (NVIDIA_VISIBLE_DEVICES, the
// device plugin's list of the GPUs it allocated; NVIDIA_DRIVER_CAPABILITIES)
// to decide which GPUs and driver features a container gets, and the
// device plugin sets CUDA_MPS_* for MPS clients. A model setting them could
// reach GPUs it was not allocated or leave its MPS server.
var reservedEnvPrefixes = []string{"NVIDIA_", "CUDA_MPS_"}

// env checks the names of a model's env map: C identifiers (what
// KServe's container env and shells accept), none reserved. A name from a
// sensitive map is not shown.
func (v *validator) env(m *config.Model) {
	names := slices.Sorted(maps.Keys(m.Env))
	for _, k := range names {
		name := fmt.Sprintf("%q", k)
		if m.IsSensitive("env") {
			name = engine.SensitiveValue
		}
		if errs := content.IsCIdentifier(k); len(errs) > 0 {
			v.errorf(m.KeyRange("env", k), "Invalid environment variable name", "%s is not an environment variable name: a letter or '_', then letters, digits or '_' (like MY_NAME).", name)
			continue
		}
		for _, prefix := range reservedEnvPrefixes {
			if strings.HasPrefix(k, prefix) {
				v.errorf(m.KeyRange("env", k), "Reserved environment variable", "%s starts with %s: the NVIDIA Container Toolkit and device plugin set and read those variables to give a container its GPUs, so a model may not set them.", name, prefix)
			}
		}
	}
}

// driverPins checks the pools that get an NVIDIADriver (pin_drivers): its
// spec.version is one version to install, so driver_version must be exact
// ("550.54.15", or "= 550.54.15"); and two pins must not select the same
// nodes, which the GPU Operator refuses (gpu-operator v25.3.4,
// internal/validator/validator.go: "conflicting NVIDIADriver NodeSelectors
// found"; the plan compares selectors, not the nodes they select).
func (v *validator) driverPins() {
	if v.cfg.Settings == nil || !v.cfg.Settings.PinDrivers {
		return
	}
	seen := map[string]*config.Pool{}
	for _, p := range v.cfg.Pools {
		if p.DriverVersion == "" {
			continue
		}
		op, _, err := config.ParseVersionConstraint(p.DriverVersion)
		if err != nil {
			continue // reported by config
		}
		if op != "=" {
			v.errorf(p.Range("driver_version"), "Driver pin is not one version", "pin_drivers installs driver_version on pool %s's nodes through a GPU Operator NVIDIADriver, which takes one version; %q is a range. Give the exact version, like \"550.54.15\".", p.Name, p.DriverVersion)
			continue
		}
		sel := capacity.SelectorString(p.NodeSelector)
		if prev, dup := seen[sel]; dup {
			v.errorf(p.Range("driver_version"), "Overlapping driver pins", "Pools %s and %s select the same nodes (%s), and the GPU Operator refuses two NVIDIADrivers for one node. Pin the driver on one of them.", prev.Name, p.Name, sel)
			continue
		}
		seen[sel] = p
	}
}
