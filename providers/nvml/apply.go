//go:build linux && cgo

package nvml

import (
	"fmt"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// AllowBusy lets Apply change GPUs that run processes. Without it Apply
	// changes nothing at all when a GPU it would change is busy, and returns
	// a *BusyError.
	AllowBusy bool `json:"allow_busy,omitempty"`
}

// GPUState is the outcome of Apply on one GPU.
type GPUState string

// The outcomes of Apply on a GPU.
const (
	// StateUnchanged: the GPU already had the layout; no call changed it.
	StateUnchanged GPUState = "unchanged"
	// StateApplied: the GPU now has the layout.
	StateApplied GPUState = "applied"
	// StateRebootRequired: the MIG mode change is pending until the GPU is
	// reset (in practice, the node rebooted); nothing else was done on it.
	StateRebootRequired GPUState = "reboot-required"
)

// ApplyResult says what Apply did.
type ApplyResult struct {
	// GPUs are the GPUs the layout names, by index.
	GPUs []GPUResult `json:"gpus"`
	// GPUInstancesCreated counts CreateGpuInstanceWithPlacement calls.
	GPUInstancesCreated int `json:"gpu_instances_created"`
	// GPUInstancesDestroyed counts GpuInstance.Destroy calls.
	GPUInstancesDestroyed int `json:"gpu_instances_destroyed"`
	// ComputeInstancesCreated counts CreateComputeInstance calls.
	ComputeInstancesCreated int `json:"compute_instances_created"`
	// ComputeInstancesDestroyed counts ComputeInstance.Destroy calls.
	ComputeInstancesDestroyed int `json:"compute_instances_destroyed"`
	// MIGModeChanges counts SetMigMode calls.
	MIGModeChanges int `json:"mig_mode_changes"`
	// RebootRequired is true when a GPU's MIG mode change is pending.
	RebootRequired bool `json:"reboot_required,omitempty"`
}

// GPUResult says what Apply did on one GPU.
type GPUResult struct {
	// Index is the NVML index of the GPU.
	Index int `json:"index"`
	// State is the outcome.
	State GPUState `json:"state"`
	// MIGModeChanged is true when SetMigMode was called.
	MIGModeChanged bool `json:"mig_mode_changed,omitempty"`
	// Kept are the GPU instances left in place.
	Kept []agentv1.Instance `json:"kept,omitempty"`
	// Created are the GPU instances created, at these placements.
	Created []agentv1.Instance `json:"created,omitempty"`
	// Destroyed are the GPU instances destroyed.
	Destroyed []agentv1.Instance `json:"destroyed,omitempty"`
}

// BusyError is returned when Apply would change GPUs that run processes and
// AllowBusy is false. Nothing was changed.
type BusyError struct {
	// GPUs are the busy GPUs Apply would have changed.
	GPUs []BusyGPU `json:"gpus"`
}

// BusyGPU is a GPU with running processes, or whose processes could not be
// listed.
type BusyGPU struct {
	// Index is the NVML index of the GPU.
	Index int `json:"index"`
	// PIDs are the processes running on it.
	PIDs []int `json:"pids,omitempty"`
	// Unlisted says why its processes could not be listed, if they could
	// not; Apply then assumes it busy.
	Unlisted string `json:"unlisted,omitempty"`
}

// Error names every busy GPU and its PIDs.
func (e *BusyError) Error() string {
	var parts []string
	for _, g := range e.GPUs {
		if g.Unlisted != "" {
			parts = append(parts, fmt.Sprintf("GPU %d's processes could not be listed: %s", g.Index, g.Unlisted))
			continue
		}
		pids := make([]string, len(g.PIDs))
		for i, p := range g.PIDs {
			pids[i] = fmt.Sprint(p)
		}
		word := "pid"
		if len(pids) > 1 {
			word = "pids"
		}
		parts = append(parts, fmt.Sprintf("GPU %d runs %s %s", g.Index, word, strings.Join(pids, ", ")))
	}
	return "refusing to change the MIG layout of GPUs with running processes (" + strings.Join(parts, "; ") +
		"); stop them or allow it (ApplyOptions.AllowBusy)"
}

// plan is what Apply will do on one GPU.
type plan struct {
	d             *device
	enable        bool // SetMigMode(ENABLE) first
	disable       bool // SetMigMode(DISABLE) last
	rebootPending bool // the wanted mode is already pending: nothing to do
	keep          []*liveGI
	destroy       []*liveGI
	create        []agentv1.Instance
}

func (p *plan) changes() bool {
	return p.enable || p.disable || len(p.destroy) > 0 || len(p.create) > 0 || slices.ContainsFunc(p.keep, needsComputeFix)
}

// needsComputeFix is true unless the GPU instance has exactly one compute
// instance, using all of its slices.
func needsComputeFix(l *liveGI) bool {
	return len(l.cis) != 1 || !l.cis[0].full
}

func apply(lib nvml.Interface, cat *mig.Catalog, layout agentv1.Layout, opts ApplyOptions) (*ApplyResult, error) {
	devs, _, err := readDevices(lib, cat)
	if err != nil {
		return nil, err
	}
	plans, err := agentv1.PlanGPUs(layout, len(devs), func(i int, e agentv1.LayoutEntry) (*plan, error) {
		return planGPU(devs[i], e)
	})
	if err != nil {
		return nil, err
	}
	if !opts.AllowBusy {
		var busy BusyError
		for _, p := range plans {
			if p.changes() && (len(p.d.info.Processes) > 0 || p.d.procErr != "") {
				busy.GPUs = append(busy.GPUs, BusyGPU{Index: p.d.info.Index, PIDs: p.d.info.PIDs(), Unlisted: p.d.procErr})
			}
		}
		if len(busy.GPUs) > 0 {
			return nil, &busy
		}
	}
	res := &ApplyResult{GPUs: []GPUResult{}}
	for _, p := range plans {
		gr, err := p.execute(res)
		res.GPUs = append(res.GPUs, gr)
		if err != nil {
			return res, fmt.Errorf("GPU %d: %w", p.d.info.Index, err)
		}
	}
	return res, nil
}

// planGPU decides what to do on one GPU, without changing anything.
func planGPU(d *device, e agentv1.LayoutEntry) (*plan, error) {
	p := &plan{d: d}
	if d.migErr != nil {
		return nil, fmt.Errorf("its MIG instances could not be listed: %w", d.migErr)
	}
	if !e.Enabled {
		switch {
		case !d.migSupported:
		case d.current == nvml.DEVICE_MIG_ENABLE:
			p.destroy, p.disable = d.gis, true
		case d.pending == nvml.DEVICE_MIG_ENABLE:
			p.disable = true // cancel a pending enable
		}
		return p, nil
	}
	g := d.gpu
	if g == nil {
		return nil, fmt.Errorf("%q is not in the GPU catalog; gpuform cannot lay out MIG instances on it", d.info.Name)
	}
	if !g.MIG || !d.migSupported {
		return nil, fmt.Errorf("%s (%s) does not support MIG", g.Key, d.info.Name)
	}
	slices := g.Slices(e.Slices)
	sol, err := mig.Solve(g, slices)
	if err != nil {
		return nil, err
	}
	if d.current != nvml.DEVICE_MIG_ENABLE {
		if d.pending == nvml.DEVICE_MIG_ENABLE {
			p.rebootPending = true
			return p, nil
		}
		p.enable = true
		for _, in := range sol {
			p.create = append(p.create, instanceOf(in))
		}
		return p, nil
	}
	p.enable = d.pending != nvml.DEVICE_MIG_ENABLE // cancel a pending disable
	p.keep, p.destroy, p.create = choose(g, slices, sol, d.gis)
	return p, nil
}

// execute carries p out, counting calls in res.
func (p *plan) execute(res *ApplyResult) (GPUResult, error) {
	d := p.d
	gr := GPUResult{Index: d.info.Index, State: StateUnchanged}
	if p.rebootPending {
		gr.State, res.RebootRequired = StateRebootRequired, true
		return gr, nil
	}
	if p.changes() {
		gr.State = StateApplied
	}
	if p.enable {
		gr.MIGModeChanged = true
		on, err := p.setMode(nvml.DEVICE_MIG_ENABLE, res)
		if err != nil {
			return gr, err
		}
		if !on {
			gr.State, res.RebootRequired = StateRebootRequired, true
			return gr, nil
		}
	}
	for _, l := range p.destroy {
		for _, c := range l.cis {
			if ret := c.ci.Destroy(); ret != nvml.SUCCESS {
				return gr, &callError{"destroying a compute instance of " + l.inst.String(), ret}
			}
			res.ComputeInstancesDestroyed++
		}
		if ret := l.gi.Destroy(); ret != nvml.SUCCESS {
			return gr, &callError{"destroying GPU instance " + l.inst.String(), ret}
		}
		res.GPUInstancesDestroyed++
		gr.Destroyed = append(gr.Destroyed, l.inst)
	}
	for _, l := range p.keep {
		gr.Kept = append(gr.Kept, l.inst)
		if !needsComputeFix(l) {
			continue
		}
		for _, c := range l.cis {
			if ret := c.ci.Destroy(); ret != nvml.SUCCESS {
				return gr, &callError{"destroying a compute instance of " + l.inst.String(), ret}
			}
			res.ComputeInstancesDestroyed++
		}
		if err := createComputeInstance(l.gi, l.prof, l.inst, res); err != nil {
			return gr, err
		}
	}
	if len(p.create) > 0 {
		profs, err := deviceProfiles(d.dev, d.gpu)
		if err != nil {
			return gr, err
		}
		byName := map[string]giProfile{}
		for _, pr := range profs {
			if _, dup := byName[pr.name]; pr.known && !dup {
				byName[pr.name] = pr
			}
		}
		for _, in := range p.create {
			pr, ok := byName[in.Profile]
			if !ok {
				return gr, fmt.Errorf("the GPU does not offer MIG profile %s", in.Profile)
			}
			info := pr.info
			gi, ret := d.dev.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: uint32(in.Start), Size: uint32(in.Size)})
			if ret != nvml.SUCCESS {
				return gr, &callError{"creating GPU instance " + in.String(), ret}
			}
			res.GPUInstancesCreated++
			gr.Created = append(gr.Created, in)
			if err := createComputeInstance(gi, pr, in, res); err != nil {
				return gr, err
			}
		}
	}
	if p.disable {
		gr.MIGModeChanged = true
		off, err := p.setMode(nvml.DEVICE_MIG_DISABLE, res)
		if err != nil {
			return gr, err
		}
		if !off {
			gr.State, res.RebootRequired = StateRebootRequired, true
		}
	}
	return gr, nil
}

// setMode sets the MIG mode and reports whether it is now current (false:
// it is pending until a GPU reset).
func (p *plan) setMode(mode int, res *ApplyResult) (bool, error) {
	word := map[int]string{nvml.DEVICE_MIG_ENABLE: "enabling", nvml.DEVICE_MIG_DISABLE: "disabling"}[mode]
	_, ret := p.d.dev.SetMigMode(mode)
	res.MIGModeChanges++
	if ret != nvml.SUCCESS {
		return false, &callError{word + " MIG mode", ret}
	}
	cur, pend, ret := p.d.dev.GetMigMode()
	if ret != nvml.SUCCESS {
		return false, &callError{"reading the MIG mode after " + word + " it", ret}
	}
	p.d.current, p.d.pending = cur, pend
	return cur == mode, nil
}

// createComputeInstance creates the compute instance that uses all of gi's
// compute slices.
func createComputeInstance(gi nvml.GpuInstance, pr giProfile, in agentv1.Instance, res *ApplyResult) error {
	cp, err := fullComputeProfile(gi, pr.info.SliceCount)
	if err != nil {
		return fmt.Errorf("GPU instance %s: %w", in, err)
	}
	if _, ret := gi.CreateComputeInstance(&cp); ret != nvml.SUCCESS {
		return &callError{"creating the compute instance of " + in.String(), ret}
	}
	res.ComputeInstancesCreated++
	return nil
}

func instanceOf(in mig.Instance) agentv1.Instance {
	return agentv1.Instance{Profile: in.Profile, Start: in.Placement.Start, Size: in.Placement.Size}
}

// choose decides which existing GPU instances to keep and where to create
// the missing ones (mig.Relayout, which the simulated cluster's GPUs share).
func choose(g *mig.GPU, slices map[string]int, sol []mig.Instance, existing []*liveGI) (keep, destroy []*liveGI, create []agentv1.Instance) {
	ins := make([]mig.Instance, len(existing))
	known := make([]bool, len(existing))
	for i, l := range existing {
		ins[i], known[i] = mig.Instance{Profile: l.inst.Profile, Placement: placement(l.inst)}, l.prof.known
	}
	k, d, c := mig.Relayout(g, slices, sol, ins, known)
	for _, i := range k {
		keep = append(keep, existing[i])
	}
	for _, i := range d {
		destroy = append(destroy, existing[i])
	}
	for _, in := range c {
		create = append(create, instanceOf(in))
	}
	return keep, destroy, create
}
