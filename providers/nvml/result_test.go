package nvml

import agentv1 "github.com/gpuform/gpuform/api/agent/v1"

// Calls counts the NVML calls that changed something: instances created
// and destroyed, MIG mode set. Zero means the machine already had the
// layout.
func (r *ApplyResult) Calls() int {
	return r.GPUInstancesCreated + r.GPUInstancesDestroyed + r.ComputeInstancesCreated +
		r.ComputeInstancesDestroyed + r.MIGModeChanges
}

// State sums the result up as the agent's gpuform.dev/mig-state value:
// "reboot-required" or "success".
func (r *ApplyResult) State() string {
	if r.RebootRequired {
		return string(StateRebootRequired)
	}
	return "success"
}

// allGPUs returns the layout that gives every GPU the same slices, with the
// convention of mig.OperatorConfigs: nil slices turn MIG off, a non-nil
// (possibly empty) map turns it on with those instances.
func allGPUs(slices map[string]int) agentv1.Layout {
	if slices == nil {
		return agentv1.Layout{{All: true}}
	}
	return agentv1.Layout{{All: true, Enabled: true, Slices: slices}}
}
