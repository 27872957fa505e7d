//go:build linux && cgo

package nvml

import (
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// simModel is a GPU model the simulated servers offer, with the catalog
// profile each of its NVML GPU instance profiles is (written out here,
// independently of profileName).
type simModel struct {
	key       string
	newServer func() *server.Server
	names     map[int]string
}

var simModels = []simModel{
	{"A100-40GB", dgxa100.New, map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: "1g.5gb", nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: "1g.5gb+me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: "1g.10gb", nvml.GPU_INSTANCE_PROFILE_2_SLICE: "2g.10gb",
		nvml.GPU_INSTANCE_PROFILE_3_SLICE: "3g.20gb", nvml.GPU_INSTANCE_PROFILE_4_SLICE: "4g.20gb",
		nvml.GPU_INSTANCE_PROFILE_7_SLICE: "7g.40gb",
	}},
	{"A100-80GB", func() *server.Server { return dgxa100.NewWithGPUs(gpus.Multiple(8, gpus.A100_SXM4_80GB)...) }, map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: "1g.10gb", nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: "1g.10gb+me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: "1g.20gb", nvml.GPU_INSTANCE_PROFILE_2_SLICE: "2g.20gb",
		nvml.GPU_INSTANCE_PROFILE_3_SLICE: "3g.40gb", nvml.GPU_INSTANCE_PROFILE_4_SLICE: "4g.40gb",
		nvml.GPU_INSTANCE_PROFILE_7_SLICE: "7g.80gb",
	}},
	{"H100-80GB", dgxh100.New, map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: "1g.10gb", nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: "1g.10gb+me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: "1g.20gb", nvml.GPU_INSTANCE_PROFILE_2_SLICE: "2g.20gb",
		nvml.GPU_INSTANCE_PROFILE_3_SLICE: "3g.40gb", nvml.GPU_INSTANCE_PROFILE_4_SLICE: "4g.40gb",
		nvml.GPU_INSTANCE_PROFILE_7_SLICE: "7g.80gb",
	}},
	{"H200-141GB", dgxh200.New, map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: "1g.18gb", nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: "1g.18gb+me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: "1g.35gb", nvml.GPU_INSTANCE_PROFILE_2_SLICE: "2g.35gb",
		nvml.GPU_INSTANCE_PROFILE_3_SLICE: "3g.71gb", nvml.GPU_INSTANCE_PROFILE_4_SLICE: "4g.71gb",
		nvml.GPU_INSTANCE_PROFILE_7_SLICE: "7g.141gb",
	}},
	{"A30-24GB", func() *server.Server { return dgxa100.NewWithGPUs(gpus.Multiple(4, gpus.A30_PCIE_24GB)...) }, map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: "1g.6gb", nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: "1g.6gb+me",
		nvml.GPU_INSTANCE_PROFILE_2_SLICE: "2g.12gb", nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1: "2g.12gb+me",
		nvml.GPU_INSTANCE_PROFILE_4_SLICE: "4g.24gb",
	}},
}

func simModelByKey(t *testing.T, key string) simModel {
	t.Helper()
	for _, m := range simModels {
		if m.key == key {
			return m
		}
	}
	t.Fatalf("no simulated model %s", key)
	return simModel{}
}

// counts are the NVML calls that change a simulated node.
type counts struct {
	createGI, destroyGI, createCI, destroyCI, setMode int
}

func (c counts) total() int { return c.createGI + c.destroyGI + c.createCI + c.destroyCI + c.setMode }

// simNode is a go-nvml simulated server made strict where gpuform relies on
// hardware behaviour the simulation lacks: MIG mode current vs pending (a
// reset needed), GPU instances only with MIG on, only at the placements the
// catalog allows, never overlapping, within max counts, one +me, the compute
// slices; a GPU instance with compute instances cannot be destroyed; MIG
// cannot be turned off while GPU instances exist; running processes. It
// counts the calls that change something.
type simNode struct {
	t       *testing.T
	model   simModel
	gpu     *mig.GPU
	srv     *server.Server
	calls   counts
	pending []int
	// needsReset makes SetMigMode leave the mode pending on that GPU.
	needsReset map[int]bool
	// procs are the running processes per GPU index.
	procs map[int][]nvml.ProcessInfo
}

func newSimNode(t *testing.T, key string) *simNode {
	t.Helper()
	m := simModelByKey(t, key)
	g, ok := mig.Default().Lookup(key)
	if !ok {
		t.Fatalf("catalog has no %s", key)
	}
	n := &simNode{t: t, model: m, gpu: g, srv: m.newServer(), needsReset: map[int]bool{}, procs: map[int][]nvml.ProcessInfo{}}
	for i, d := range n.srv.Devices {
		n.pending = append(n.pending, nvml.DEVICE_MIG_DISABLE)
		n.harden(i, d.(*server.Device))
	}
	return n
}

func (n *simNode) dev(i int) *server.Device { return n.srv.Devices[i].(*server.Device) }

// reboot applies pending MIG modes.
func (n *simNode) reboot() {
	for i := range n.srv.Devices {
		n.dev(i).MigMode = n.pending[i]
	}
}

func (n *simNode) harden(i int, d *server.Device) {
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		return d.MigMode, n.pending[i], nvml.SUCCESS
	}
	d.SetMigModeFunc = func(mode int) (nvml.Return, nvml.Return) {
		n.calls.setMode++
		if mode == nvml.DEVICE_MIG_DISABLE && len(d.GpuInstances) > 0 {
			return nvml.ERROR_IN_USE, nvml.ERROR_IN_USE
		}
		n.pending[i] = mode
		if n.needsReset[i] {
			return nvml.ERROR_RESET_REQUIRED, nvml.SUCCESS
		}
		d.MigMode = mode
		return nvml.SUCCESS, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return n.procs[i], nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return nil, nvml.SUCCESS
	}
	d.CreateGpuInstanceFunc = func(*nvml.GpuInstanceProfileInfo) (nvml.GpuInstance, nvml.Return) {
		n.t.Errorf("GPU %d: CreateGpuInstance without a placement", i)
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	create := d.CreateGpuInstanceWithPlacementFunc
	d.CreateGpuInstanceWithPlacementFunc = func(info *nvml.GpuInstanceProfileInfo, pl *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
		n.calls.createGI++
		if ret := n.check(d, info, pl); ret != nvml.SUCCESS {
			n.t.Errorf("GPU %d: CreateGpuInstanceWithPlacement(%s at %d:%d): %s", i, n.model.names[int(info.Id)], pl.Start, pl.Size, retName(ret))
			return nil, ret
		}
		gi, ret := create(info, pl)
		if ret == nvml.SUCCESS {
			n.hardenGI(gi.(*server.GpuInstance))
		}
		return gi, ret
	}
}

// check is what the hardware would refuse.
func (n *simNode) check(d *server.Device, info *nvml.GpuInstanceProfileInfo, pl *nvml.GpuInstancePlacement) nvml.Return {
	if d.MigMode != nvml.DEVICE_MIG_ENABLE {
		return nvml.ERROR_NOT_SUPPORTED
	}
	p, ok := n.gpu.Profile(n.model.names[int(info.Id)])
	if !ok {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	want := mig.Placement{Start: int(pl.Start), Size: int(pl.Size)}
	okPl := false
	for _, a := range p.Placements {
		okPl = okPl || a == want
	}
	if !okPl {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	same, compute := 0, p.ComputeSlices
	for gi := range d.GpuInstances {
		q, _ := n.gpu.Profile(n.model.names[int(gi.Info.ProfileId)])
		if q.Name == p.Name {
			same++
		}
		if q.MediaExtensions && p.MediaExtensions {
			return nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		compute += q.ComputeSlices
		o := gi.Info.Placement
		if want.Start < int(o.Start+o.Size) && int(o.Start) < want.End() {
			return nvml.ERROR_INSUFFICIENT_RESOURCES
		}
	}
	if same >= p.MaxInstances || compute > n.gpu.ComputeSlices {
		return nvml.ERROR_INSUFFICIENT_RESOURCES
	}
	return nvml.SUCCESS
}

func (n *simNode) hardenGI(gi *server.GpuInstance) {
	destroy := gi.DestroyFunc
	gi.DestroyFunc = func() nvml.Return {
		n.calls.destroyGI++
		if len(gi.ComputeInstances) > 0 {
			n.t.Errorf("GPU instance %d destroyed while it has compute instances", gi.Info.Id)
			return nvml.ERROR_IN_USE
		}
		return destroy()
	}
	create := gi.CreateComputeInstanceFunc
	gi.CreateComputeInstanceFunc = func(info *nvml.ComputeInstanceProfileInfo) (nvml.ComputeInstance, nvml.Return) {
		n.calls.createCI++
		used := info.SliceCount
		for c := range gi.ComputeInstances {
			used += c.Info.Placement.Size
		}
		giSlices := gi.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)].SliceCount
		if used > giSlices {
			return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		ci, ret := create(info)
		if ret != nvml.SUCCESS {
			return ci, ret
		}
		c := ci.(*server.ComputeInstance)
		c.Info.Placement = nvml.ComputeInstancePlacement{Start: used - info.SliceCount, Size: info.SliceCount}
		destroyCI := c.DestroyFunc
		c.DestroyFunc = func() nvml.Return {
			n.calls.destroyCI++
			return destroyCI()
		}
		return ci, ret
	}
}

// apply applies layout and fails the test on error.
func (n *simNode) apply(layout agentv1.Layout, opts ApplyOptions) *ApplyResult {
	n.t.Helper()
	res, err := Apply(n.srv, nil, layout, opts)
	if err != nil {
		n.t.Fatalf("Apply: %v", err)
	}
	return res
}

// read reads the inventory and fails the test on error.
func (n *simNode) read() *agentv1.Inventory {
	n.t.Helper()
	inv, err := Read(n.srv, nil)
	if err != nil {
		n.t.Fatalf("Read: %v", err)
	}
	return inv
}

// instances returns g's GPU instances as profile@start:size strings.
func instances(g *agentv1.GPU) []string {
	var out []string
	for _, in := range g.Instances {
		out = append(out, in.String())
	}
	return out
}

// solved returns Solve's placements as profile@start:size strings.
func solved(t *testing.T, g *mig.GPU, slices map[string]int) []string {
	t.Helper()
	sol, err := mig.Solve(g, slices)
	if err != nil {
		t.Fatalf("Solve(%v): %v", slices, err)
	}
	var out []string
	for _, in := range sol {
		out = append(out, fmt.Sprintf("%s@%d:%d", in.Profile, in.Placement.Start, in.Placement.Size))
	}
	return out
}
