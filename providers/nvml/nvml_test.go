//go:build linux && cgo

package nvml

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"sigs.k8s.io/yaml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

func sortedConfigs(g *mig.GPU) ([]string, map[string]map[string]int) {
	cfgs := mig.OperatorConfigs(g)
	var names []string
	for name := range cfgs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, cfgs
}

// Every NVML GPU instance profile of every simulated model gets the
// catalog's name, +me variants included.
func TestProfileNames(t *testing.T) {
	for _, m := range simModels {
		t.Run(m.key, func(t *testing.T) {
			g, _ := mig.Default().Lookup(m.key)
			dev := m.newServer().Devices[0]
			profs, err := deviceProfiles(dev, g)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int]string{}
			for _, p := range profs {
				if !p.known {
					t.Errorf("profile %d (%s) is not in the catalog", p.id, p.name)
				}
				got[p.id] = p.name
			}
			if !reflect.DeepEqual(got, m.names) {
				t.Errorf("names:\n got %v\nwant %v", got, m.names)
			}
		})
	}
}

// Each GPU Operator named config, applied to a fresh simulated server, reads
// back instance by instance as the solver placed it, with one full compute
// instance each; applying it again makes no call.
func TestOperatorConfigs(t *testing.T) {
	for _, m := range simModels {
		g, _ := mig.Default().Lookup(m.key)
		names, cfgs := sortedConfigs(g)
		for _, name := range names {
			slices := cfgs[name]
			t.Run(m.key+"/"+name, func(t *testing.T) {
				n := newSimNode(t, m.key)
				nGPUs := len(n.srv.Devices)
				res := n.apply(allGPUs(slices), ApplyOptions{})
				want := solved(t, g, slices)
				wantCalls := counts{createGI: len(want) * nGPUs, createCI: len(want) * nGPUs}
				if slices != nil {
					wantCalls.setMode = nGPUs
				}
				if n.calls != wantCalls {
					t.Errorf("first apply calls = %+v, want %+v", n.calls, wantCalls)
				}
				if res.GPUInstancesCreated != wantCalls.createGI || res.MIGModeChanges != wantCalls.setMode || res.State() != "success" {
					t.Errorf("result = %+v", res)
				}
				inv := n.read()
				if len(inv.GPUs) != nGPUs {
					t.Fatalf("read %d GPUs, want %d", len(inv.GPUs), nGPUs)
				}
				for _, gpu := range inv.GPUs {
					if gpu.Model != m.key || gpu.MIGEnabled != (slices != nil) || gpu.MIGPending {
						t.Errorf("GPU %d: model %q mig %v pending %v", gpu.Index, gpu.Model, gpu.MIGEnabled, gpu.MIGPending)
					}
					if got := instances(&gpu); !reflect.DeepEqual(got, want) {
						t.Errorf("GPU %d instances:\n got %v\nwant %v (solver)", gpu.Index, got, want)
					}
					for _, gi := range gpu.Instances {
						p, _ := g.Profile(gi.Profile)
						if len(gi.ComputeInstances) != 1 || gi.ComputeInstances[0].Profile != gi.Profile || gi.ComputeInstances[0].Size != p.ComputeSlices {
							t.Errorf("GPU %d %s: compute instances %+v", gpu.Index, gi.Instance, gi.ComputeInstances)
						}
					}
				}
				before := n.calls
				again := n.apply(allGPUs(slices), ApplyOptions{})
				if n.calls != before || again.Calls() != 0 || again.State() != "success" {
					t.Errorf("second apply made calls: %+v (result %+v)", n.calls, again)
				}
				for _, gr := range again.GPUs {
					if gr.State != StateUnchanged {
						t.Errorf("second apply: GPU %d is %s", gr.Index, gr.State)
					}
				}
			})
		}
	}
}

// A layout change destroys only the instances that cannot stay.
func TestLayoutChange(t *testing.T) {
	tests := []struct {
		model     string
		from, to  map[string]int
		kept      []string
		destroyed []string
		created   []string
		after     []string
	}{
		{
			model: "A100-40GB", from: map[string]int{"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}, to: map[string]int{"3g.20gb": 2},
			kept:      []string{"3g.20gb@4:4"},
			destroyed: []string{"2g.10gb@0:2", "1g.5gb@2:1", "1g.5gb@3:1"},
			created:   []string{"3g.20gb@0:4"},
			after:     []string{"3g.20gb@0:4", "3g.20gb@4:4"},
		},
		{
			model: "A100-80GB", from: map[string]int{"1g.10gb": 7}, to: map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
			kept:      []string{"1g.10gb@2:1", "1g.10gb@3:1"},
			destroyed: []string{"1g.10gb@0:1", "1g.10gb@1:1", "1g.10gb@4:1", "1g.10gb@5:1", "1g.10gb@6:1"},
			created:   []string{"2g.20gb@0:2", "3g.40gb@4:4"},
			after:     []string{"2g.20gb@0:2", "1g.10gb@2:1", "1g.10gb@3:1", "3g.40gb@4:4"},
		},
		{
			model: "H100-80GB", from: map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}, to: map[string]int{"2g.20gb": 1, "3g.40gb": 1},
			kept:      []string{"2g.20gb@0:2", "3g.40gb@4:4"},
			destroyed: []string{"1g.10gb@2:1", "1g.10gb@3:1"},
			after:     []string{"2g.20gb@0:2", "3g.40gb@4:4"},
		},
		{
			model: "H200-141GB", from: map[string]int{"7g.141gb": 1}, to: map[string]int{"1g.18gb": 7},
			destroyed: []string{"7g.141gb@0:8"},
			created:   []string{"1g.18gb@0:1", "1g.18gb@1:1", "1g.18gb@2:1", "1g.18gb@3:1", "1g.18gb@4:1", "1g.18gb@5:1", "1g.18gb@6:1"},
			after:     []string{"1g.18gb@0:1", "1g.18gb@1:1", "1g.18gb@2:1", "1g.18gb@3:1", "1g.18gb@4:1", "1g.18gb@5:1", "1g.18gb@6:1"},
		},
		{
			model: "A30-24GB", from: map[string]int{"1g.6gb": 2, "2g.12gb": 1}, to: map[string]int{"2g.12gb": 2},
			kept:      []string{"2g.12gb@0:2"},
			destroyed: []string{"1g.6gb@2:1", "1g.6gb@3:1"},
			created:   []string{"2g.12gb@2:2"},
			after:     []string{"2g.12gb@0:2", "2g.12gb@2:2"},
		},
		{
			// The existing instance is not where the solver would put a
			// fresh layout; it stays and the new one goes around it.
			model: "A100-80GB", from: map[string]int{"1g.10gb": 1}, to: map[string]int{"1g.10gb": 1, "2g.20gb": 1},
			kept:    []string{"1g.10gb@0:1"},
			created: []string{"2g.20gb@2:2"},
			after:   []string{"1g.10gb@0:1", "2g.20gb@2:2"},
		},
		{
			// The 3g instance sits where the only 4g placement is: it must
			// move.
			model: "A100-80GB", from: map[string]int{"3g.40gb": 1}, to: map[string]int{"3g.40gb": 1, "4g.40gb": 1},
			kept:      nil,
			destroyed: []string{"3g.40gb@0:4"},
			created:   []string{"4g.40gb@0:4", "3g.40gb@4:4"},
			after:     []string{"4g.40gb@0:4", "3g.40gb@4:4"},
		},
		{
			model: "H100-80GB", from: map[string]int{"1g.10gb+me": 1, "1g.10gb": 2}, to: map[string]int{"1g.10gb+me": 1, "1g.10gb": 6},
			kept:    []string{"1g.10gb@0:1", "1g.10gb@1:1", "1g.10gb+me@2:1"},
			created: []string{"1g.10gb@3:1", "1g.10gb@4:1", "1g.10gb@5:1", "1g.10gb@6:1"},
			after:   []string{"1g.10gb@0:1", "1g.10gb@1:1", "1g.10gb+me@2:1", "1g.10gb@3:1", "1g.10gb@4:1", "1g.10gb@5:1", "1g.10gb@6:1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+sliceName(tt.from)+"->"+sliceName(tt.to), func(t *testing.T) {
			n := newSimNode(t, tt.model)
			n.apply(allGPUs(tt.from), ApplyOptions{})
			beforeIDs := giIDs(n.read())
			start := n.calls
			res := n.apply(allGPUs(tt.to), ApplyOptions{})
			nGPUs := len(n.srv.Devices)
			if got := n.calls.destroyGI - start.destroyGI; got != len(tt.destroyed)*nGPUs {
				t.Errorf("destroyed %d GPU instances, want %d", got, len(tt.destroyed)*nGPUs)
			}
			if got := n.calls.createGI - start.createGI; got != len(tt.created)*nGPUs {
				t.Errorf("created %d GPU instances, want %d", got, len(tt.created)*nGPUs)
			}
			if n.calls.setMode != start.setMode {
				t.Errorf("MIG mode set again")
			}
			for _, gr := range res.GPUs {
				if !reflect.DeepEqual(strs(gr.Kept), tt.kept) || !reflect.DeepEqual(strs(gr.Destroyed), tt.destroyed) || !reflect.DeepEqual(strs(gr.Created), tt.created) {
					t.Errorf("GPU %d: kept %v destroyed %v created %v; want %v %v %v", gr.Index, strs(gr.Kept), strs(gr.Destroyed), strs(gr.Created), tt.kept, tt.destroyed, tt.created)
				}
			}
			inv := n.read()
			afterIDs := giIDs(inv)
			for _, gpu := range inv.GPUs {
				if got := instances(&gpu); !reflect.DeepEqual(got, tt.after) {
					t.Errorf("GPU %d now has %v, want %v", gpu.Index, got, tt.after)
				}
				for _, k := range tt.kept {
					key := [2]any{gpu.Index, k}
					if beforeIDs[key] != afterIDs[key] {
						t.Errorf("GPU %d: %s was recreated (id %d -> %d)", gpu.Index, k, beforeIDs[key], afterIDs[key])
					}
				}
			}
			start = n.calls
			if again := n.apply(allGPUs(tt.to), ApplyOptions{}); again.Calls() != 0 || n.calls != start {
				t.Errorf("re-apply made calls: %+v", again)
			}
		})
	}
}

// Applying every named config in turn, forwards then backwards, on one node:
// the simulated hardware accepts every call (placements, overlaps, order of
// destruction) and each state reads back as its layout.
func TestConfigSequence(t *testing.T) {
	for _, m := range simModels {
		t.Run(m.key, func(t *testing.T) {
			g := mustGPU(t, m.key)
			names, cfgs := sortedConfigs(g)
			seq := append([]string{}, names...)
			for i := len(names) - 1; i >= 0; i-- {
				seq = append(seq, names[i])
			}
			n := newSimNode(t, m.key)
			for _, name := range seq {
				n.apply(allGPUs(cfgs[name]), ApplyOptions{})
				for _, gpu := range n.read().GPUs {
					want := cfgs[name]
					if len(want) == 0 {
						want = nil
					}
					if got := gpu.Slices(); !reflect.DeepEqual(got, want) || gpu.MIGEnabled != (cfgs[name] != nil) {
						t.Fatalf("%s: GPU %d has %v (MIG %v)", name, gpu.Index, got, gpu.MIGEnabled)
					}
				}
				start := n.calls
				if n.apply(allGPUs(cfgs[name]), ApplyOptions{}); n.calls != start {
					t.Fatalf("%s: re-apply made calls", name)
				}
			}
		})
	}
}

// A GPU with running processes is not touched unless AllowBusy; a busy GPU
// that needs no change is fine.
func TestBusyGPU(t *testing.T) {
	n := newSimNode(t, "A100-80GB")
	n.procs[2] = []nvml.ProcessInfo{{Pid: 4243, UsedGpuMemory: 2 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}, {Pid: 4242, UsedGpuMemory: 1 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}}
	n.procs[5] = []nvml.ProcessInfo{{Pid: 77, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}}
	layout := allGPUs(map[string]int{"1g.10gb": 7})

	inv := n.read()
	if got := inv.GPU(2).Processes; len(got) != 2 || got[0].PID != 4242 || got[0].UsedMemoryMiB != 1024 || got[1].UsedMemoryMiB != 2048 || got[0].GPUInstance != nil {
		t.Errorf("GPU 2 processes = %+v", got)
	}

	tests := []struct {
		name    string
		layout  agentv1.Layout
		opts    ApplyOptions
		wantErr string
		calls   bool
	}{
		{"refused", layout, ApplyOptions{}, "GPU 2 runs pids 4242, 4243; GPU 5 runs pid 77", false},
		{"only idle GPUs named", agentv1.Layout{{Indexes: []int{0, 1}, Enabled: true, Slices: map[string]int{"1g.10gb": 7}}}, ApplyOptions{}, "", true},
		{"allowed", layout, ApplyOptions{AllowBusy: true}, "", true},
		{"busy but unchanged", layout, ApplyOptions{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := n.calls
			_, err := Apply(n.srv, nil, tt.layout, tt.opts)
			if tt.wantErr != "" {
				var be *BusyError
				if !errors.As(err, &be) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a BusyError naming %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if made := n.calls != start; made != tt.calls {
				t.Errorf("calls made = %v, want %v (%+v)", made, tt.calls, n.calls)
			}
		})
	}
}

// Without the permission to list processes or MIG instances, Read warns and
// Apply does not touch that GPU.
func TestPermissions(t *testing.T) {
	n := newSimNode(t, "H100-80GB")
	n.apply(allGPUs(map[string]int{"3g.40gb": 2}), ApplyOptions{})
	n.dev(6).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION }
	n.dev(7).GetGpuInstancesFunc = func(*nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstance, nvml.Return) {
		return nil, nvml.ERROR_NO_PERMISSION
	}
	inv := n.read()
	want := []string{
		"GPU 6: running processes not listed: ERROR_NO_PERMISSION",
		"GPU 7: MIG instances not listed: listing GPU instances of profile 1g.10gb: ERROR_NO_PERMISSION (needs root)",
	}
	if !reflect.DeepEqual(inv.Warnings, want) {
		t.Errorf("warnings = %q", inv.Warnings)
	}
	if len(inv.GPU(7).Instances) != 0 || !inv.GPU(7).MIGEnabled {
		t.Errorf("GPU 7 = %+v", inv.GPU(7))
	}
	start := n.calls
	_, err := Apply(n.srv, nil, allGPUs(map[string]int{"7g.80gb": 1}), ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "GPU 7: its MIG instances could not be listed") {
		t.Errorf("err = %v", err)
	}
	_, err = Apply(n.srv, nil, agentv1.Layout{{Indexes: []int{6}, Enabled: true, Slices: map[string]int{"7g.80gb": 1}}}, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "GPU 6's processes could not be listed: ERROR_NO_PERMISSION") {
		t.Errorf("err = %v", err)
	}
	if n.calls != start {
		t.Errorf("calls made: %+v", n.calls)
	}
	if res := n.apply(agentv1.Layout{{Indexes: []int{6}, Enabled: true, Slices: map[string]int{"7g.80gb": 1}}}, ApplyOptions{AllowBusy: true}); res.GPUInstancesCreated != 1 {
		t.Errorf("with AllowBusy: %+v", res)
	}
}

// strictLib is an nvml.Interface every function of which fails the test,
// except Init, which returns ret (or panics when ret is 0 and panicInit).
func strictLib(t *testing.T, initRet nvml.Return, panicInit bool) (*mock.Interface, *[]string) {
	var called []string
	m := &mock.Interface{}
	v := reflect.ValueOf(m).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		if f.Kind() != reflect.Func || !strings.HasSuffix(name, "Func") {
			continue
		}
		ft := f.Type()
		f.Set(reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
			called = append(called, strings.TrimSuffix(name, "Func"))
			t.Errorf("NVML %s called after a failed Init", strings.TrimSuffix(name, "Func"))
			out := make([]reflect.Value, ft.NumOut())
			for j := range out {
				out[j] = reflect.Zero(ft.Out(j))
			}
			return out
		}))
	}
	m.InitFunc = func() nvml.Return {
		called = append(called, "Init")
		if panicInit {
			panic("libnvidia-ml.so.1: cannot open shared object file")
		}
		return initRet
	}
	return m, &called
}

// nvml.Init failing is one clear error and nothing else is called.
func TestInitFailure(t *testing.T) {
	tests := []struct {
		name   string
		ret    nvml.Return
		panics bool
		reason string
	}{
		{"driver not loaded", nvml.ERROR_DRIVER_NOT_LOADED, false, "the NVIDIA driver is not loaded (ERROR_DRIVER_NOT_LOADED)"},
		{"library not found", nvml.ERROR_LIBRARY_NOT_FOUND, false, "libnvidia-ml.so.1 was not found (ERROR_LIBRARY_NOT_FOUND)"},
		{"version mismatch", nvml.ERROR_LIB_RM_VERSION_MISMATCH, false, "the NVML library and the kernel driver are different versions (ERROR_LIB_RM_VERSION_MISMATCH)"},
		{"init panics", nvml.SUCCESS, true, "initialising NVML failed: libnvidia-ml.so.1: cannot open shared object file"},
	}
	entries := map[string]func(nvml.Interface) error{
		"Open": func(l nvml.Interface) error { _, err := Open(l); return err },
		"Read": func(l nvml.Interface) error { _, err := Read(l, nil); return err },
		"Apply": func(l nvml.Interface) error {
			_, err := Apply(l, nil, allGPUs(map[string]int{}), ApplyOptions{})
			return err
		},
	}
	for _, tt := range tests {
		for entry, call := range entries {
			t.Run(tt.name+"/"+entry, func(t *testing.T) {
				lib, called := strictLib(t, tt.ret, tt.panics)
				err := call(lib)
				want := "NVML is not available on this machine: " + tt.reason +
					"; run gpuform inventory on a GPU node, or use the cluster's published inventory"
				if err == nil || err.Error() != want {
					t.Fatalf("err = %v\nwant %s", err, want)
				}
				var ue *UnavailableError
				if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) || ue.Return != tt.ret {
					t.Errorf("err is not an UnavailableError with %v: %#v", tt.ret, err)
				}
				if !reflect.DeepEqual(*called, []string{"Init"}) {
					t.Errorf("calls = %v, want only Init", *called)
				}
			})
		}
	}
	if _, err := Open(nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Open(nil) = %v", err)
	}
}

// On this machine's real library: without a driver Open is an
// ErrUnavailable; with one, Read works (read-only).
func TestLocal(t *testing.T) {
	lib, err := Local()
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Local: %v", err)
		}
		return
	}
	s, err := Open(lib)
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Open(Local()) = %v, want ErrUnavailable", err)
		}
		t.Logf("no NVML here: %v", err)
		return
	}
	defer s.Close()
	inv, err := s.Read(nil)
	if err != nil {
		t.Fatalf("Read on the local GPUs: %v", err)
	}
	b, _ := json.Marshal(inv)
	t.Logf("local inventory: %s", b)
}

// A closed session and a panicking simulated function are errors, never a
// crash or a call.
func TestSessionGuards(t *testing.T) {
	n := newSimNode(t, "H100-80GB")
	s, err := Open(n.srv)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Read on a closed session = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	n.dev(3).GetUUIDFunc = nil // the mock panics when called
	if _, err := Read(n.srv, nil); err == nil || !strings.Contains(err.Error(), "GetUUID") {
		t.Errorf("Read with a panicking device = %v", err)
	}
}

// A MIG mode change that needs a GPU reset is reported, not hidden, and
// nothing else is done until the reset.
func TestPendingMIGMode(t *testing.T) {
	n := newSimNode(t, "A100-40GB")
	for i := range n.srv.Devices {
		n.needsReset[i] = true
	}
	nGPUs := len(n.srv.Devices)
	layout := allGPUs(map[string]int{"1g.5gb": 7})
	steps := []struct {
		name     string
		before   func()
		layout   agentv1.Layout
		state    string
		gpuState GPUState
		calls    counts
		enabled  bool
		pending  bool
	}{
		{"enable needs a reset", nil, layout, "reboot-required", StateRebootRequired, counts{setMode: nGPUs}, false, true},
		{"still pending", nil, layout, "reboot-required", StateRebootRequired, counts{}, false, true},
		{"after the reboot", n.reboot, layout, "success", StateApplied, counts{createGI: 7 * nGPUs, createCI: 7 * nGPUs}, true, false},
		{"disable needs a reset", nil, allGPUs(nil), "reboot-required", StateRebootRequired, counts{destroyGI: 7 * nGPUs, destroyCI: 7 * nGPUs, setMode: nGPUs}, true, true},
		{"disabled after the reboot", n.reboot, allGPUs(nil), "success", StateUnchanged, counts{}, false, false},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		start := n.calls
		res := n.apply(st.layout, ApplyOptions{})
		got := counts{n.calls.createGI - start.createGI, n.calls.destroyGI - start.destroyGI, n.calls.createCI - start.createCI, n.calls.destroyCI - start.destroyCI, n.calls.setMode - start.setMode}
		if res.State() != st.state || got != st.calls {
			t.Errorf("%s: state %s calls %+v, want %s %+v", st.name, res.State(), got, st.state, st.calls)
		}
		for _, gr := range res.GPUs {
			if gr.State != st.gpuState {
				t.Errorf("%s: GPU %d is %s, want %s", st.name, gr.Index, gr.State, st.gpuState)
			}
		}
		for _, gpu := range n.read().GPUs {
			if gpu.MIGEnabled != st.enabled || gpu.MIGPending != st.pending {
				t.Errorf("%s: GPU %d MIG enabled %v pending %v", st.name, gpu.Index, gpu.MIGEnabled, gpu.MIGPending)
			}
		}
	}
}

// Per-GPU entries, and layouts that are wrong before any call is made.
func TestLayouts(t *testing.T) {
	n := newSimNode(t, "H100-80GB")
	mixed := agentv1.Layout{
		{All: true, Enabled: true, Slices: map[string]int{"1G.10GB": 7}},
		{Indexes: []int{1, 3}},
		{Indexes: []int{5}, Enabled: true, Slices: map[string]int{"7g.80gb": 1}},
	}
	n.apply(mixed, ApplyOptions{})
	for _, gpu := range n.read().GPUs {
		want := map[string]int{"1g.10gb": 7}
		switch gpu.Index {
		case 1, 3:
			want = nil
		case 5:
			want = map[string]int{"7g.80gb": 1}
		}
		if got := gpu.Slices(); !reflect.DeepEqual(got, want) || gpu.MIGEnabled != (want != nil) {
			t.Errorf("GPU %d has %v (MIG %v), want %v", gpu.Index, got, gpu.MIGEnabled, want)
		}
	}
	bad := []struct {
		name   string
		layout agentv1.Layout
		err    string
	}{
		{"no devices", agentv1.Layout{{Enabled: true}}, "layout entry 0 names no GPU"},
		{"index out of range", agentv1.Layout{{Indexes: []int{8}, Enabled: true}}, "layout entry 0 names GPU 8, but this machine has 8 GPUs"},
		{"off with slices", agentv1.Layout{{All: true, Slices: map[string]int{"1g.10gb": 1}}}, "turns MIG off but asks for 1 x 1g.10gb"},
		{"unknown profile", agentv1.Layout{{Indexes: []int{2}, Enabled: true, Slices: map[string]int{"1g.5gb": 1}}}, "GPU 2: "},
		{"over max", agentv1.Layout{{Indexes: []int{4}, Enabled: true, Slices: map[string]int{"1g.10gb": 8}}}, `GPU 4: profile "1g.10gb" allows at most 7`},
		{"two +me", agentv1.Layout{{All: true, Enabled: true, Slices: map[string]int{"1g.10gb+me": 2}}}, "GPU 0: "},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			start := n.calls
			_, err := Apply(n.srv, nil, tt.layout, ApplyOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
			if n.calls != start {
				t.Errorf("calls made: %+v", n.calls)
			}
		})
	}
}

// A GPU the catalog does not know, or without MIG, cannot take slices but
// can be read and left with MIG off.
func TestNonMIGGPU(t *testing.T) {
	n := newSimNode(t, "H100-80GB")
	d := n.dev(0)
	d.GetNameFunc = func() (string, nvml.Return) { return "Tesla T4", nvml.SUCCESS }
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	inv := n.read()
	if g := inv.GPU(0); g.Model != "T4" || g.MIGCapable || g.MIGEnabled {
		t.Errorf("GPU 0 = %+v", g)
	}
	if _, err := Apply(n.srv, nil, allGPUs(map[string]int{"1g.10gb": 1}), ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "GPU 0: T4 (Tesla T4) does not support MIG") {
		t.Errorf("err = %v", err)
	}
	if res := n.apply(agentv1.Layout{{Indexes: []int{0}}}, ApplyOptions{}); res.Calls() != 0 {
		t.Errorf("MIG off on a non-MIG GPU made calls")
	}
}

// Instances made by someone else are kept when they fit; a GPU instance
// without its compute instance, or with a partial one, is completed.
func TestForeignInstances(t *testing.T) {
	n := newSimNode(t, "A100-80GB")
	n.apply(allGPUs(map[string]int{}), ApplyOptions{})
	profile := func(d *server.Device, id int) *nvml.GpuInstanceProfileInfo {
		info, _ := d.GetGpuInstanceProfileInfo(id)
		return &info
	}
	d0, d1 := n.dev(0), n.dev(1)
	if _, ret := d0.CreateGpuInstanceWithPlacement(profile(d0, nvml.GPU_INSTANCE_PROFILE_1_SLICE), &nvml.GpuInstancePlacement{Start: 6, Size: 1}); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	gi, ret := d1.CreateGpuInstanceWithPlacement(profile(d1, nvml.GPU_INSTANCE_PROFILE_2_SLICE), &nvml.GpuInstancePlacement{Start: 4, Size: 2})
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	cp, _ := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if _, ret := gi.CreateComputeInstance(&cp); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	inv := n.read()
	if ci := inv.GPU(1).Instances[0].ComputeInstances; len(ci) != 1 || ci[0].Profile != "1c.2g.20gb" {
		t.Errorf("partial compute instance read as %+v", ci)
	}
	res := n.apply(agentv1.Layout{
		{Indexes: []int{0}, Enabled: true, Slices: map[string]int{"1g.10gb": 7}},
		{Indexes: []int{1}, Enabled: true, Slices: map[string]int{"2g.20gb": 3}},
	}, ApplyOptions{})
	if res.GPUInstancesDestroyed != 0 || res.GPUInstancesCreated != 6+2 || res.ComputeInstancesCreated != 7+3 || res.ComputeInstancesDestroyed != 1 {
		t.Errorf("result = %+v", res)
	}
	inv = n.read()
	for _, i := range []int{0, 1} {
		for _, gi := range inv.GPU(i).Instances {
			if len(gi.ComputeInstances) != 1 || gi.ComputeInstances[0].Profile != gi.Profile {
				t.Errorf("GPU %d %s: compute instances %+v", i, gi.Instance, gi.ComputeInstances)
			}
		}
	}
}

// A layout is a mig-parted config entry list, in JSON and in YAML.
func TestLayoutEncoding(t *testing.T) {
	const migParted = `
- devices: all
  mig-enabled: true
  mig-devices:
    1g.10gb: 2
    2g.20gb: 1
    3g.40gb: 1
- devices: [1, 3]
  mig-enabled: false
`
	var l agentv1.Layout
	if err := yaml.Unmarshal([]byte(migParted), &l); err != nil {
		t.Fatal(err)
	}
	want := agentv1.Layout{
		{All: true, Enabled: true, Slices: map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
		{Indexes: []int{1, 3}},
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("got %+v", l)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); s != `[{"devices":"all","mig-enabled":true,"mig-devices":{"1g.10gb":2,"2g.20gb":1,"3g.40gb":1}},{"devices":[1,3],"mig-enabled":false}]` {
		t.Errorf("JSON = %s", s)
	}
	var back agentv1.Layout
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	for _, bad := range []string{`[{"mig-enabled":true}]`, `[{"devices":"some"}]`, `[{"devices":{"a":1}}]`,
		`[{"devices":"all","device-filter":"0x20B010DE","mig-enabled":false}]`, `[{"devices":"all","mig-enable":true}]`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// The sample inventory (what the agent publishes) decodes with every field.
func TestInventorySample(t *testing.T) {
	b, err := os.ReadFile("testdata/inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	var inv agentv1.Inventory
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		t.Fatal(err)
	}
	if inv.Version != agentv1.InventoryVersion || inv.DriverVersion != "550.54.15" || inv.CUDAVersion != "12.4" || len(inv.GPUs) != 2 {
		t.Fatalf("inventory = %+v", inv)
	}
	g0, g1 := inv.GPU(0), inv.GPU(1)
	if g0.Model != "H100-80GB" || !g0.MIGEnabled || g0.MIGPending || g0.MemoryMiB != 81559 {
		t.Errorf("GPU 0 = %+v", g0)
	}
	if got := instances(g0); !reflect.DeepEqual(got, []string{"2g.20gb@0:2", "1g.10gb@2:1", "1g.10gb@3:1", "3g.40gb@4:4"}) {
		t.Errorf("GPU 0 instances = %v", got)
	}
	if p := g0.Processes; len(p) != 1 || p[0].PID != 4242 || p[0].UsedMemoryMiB != 8123 || *p[0].GPUInstance != 2 || *p[0].ComputeInstance != 0 {
		t.Errorf("GPU 0 processes = %+v", p)
	}
	if g1.MIGEnabled || !g1.MIGPending || len(g1.Instances) != 0 || g1.Slices() != nil {
		t.Errorf("GPU 1 = %+v", g1)
	}
	out, err := json.Marshal(&inv)
	if err != nil {
		t.Fatal(err)
	}
	var again agentv1.Inventory
	if err := json.Unmarshal(out, &again); err != nil || !reflect.DeepEqual(again, inv) {
		t.Errorf("round trip differs: %v", err)
	}
}

// What Read returns survives JSON, and a full DGX stays small enough for a
// node annotation.
func TestInventoryJSON(t *testing.T) {
	n := newSimNode(t, "H200-141GB")
	n.procs[0] = []nvml.ProcessInfo{{Pid: 1, UsedGpuMemory: 1 << 20, GpuInstanceId: 3, ComputeInstanceId: 0}}
	n.apply(allGPUs(map[string]int{"1g.18gb": 7}), ApplyOptions{AllowBusy: true})
	inv := n.read()
	if inv.Version != 1 || inv.DriverVersion != "550.54.15" || inv.CUDAVersion != "12.4" || len(inv.Warnings) != 0 {
		t.Errorf("inventory = %+v", inv)
	}
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 16<<10 {
		t.Errorf("8 x 7 instances take %d bytes of JSON", len(b))
	}
	var back agentv1.Inventory
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, inv) {
		t.Errorf("round trip differs: %v", err)
	}
	t.Logf("%d bytes for %d GPUs", len(b), len(inv.GPUs))
}

// sliceName writes slices as "2x1g.10gb+1x3g.40gb".
func sliceName(slices map[string]int) string {
	var parts []string
	for p, c := range slices {
		parts = append(parts, fmt.Sprintf("%dx%s", c, p))
	}
	sort.Strings(parts)
	return strings.Join(parts, "+")
}

func mustGPU(t *testing.T, key string) *mig.GPU {
	t.Helper()
	g, ok := mig.Default().Lookup(key)
	if !ok {
		t.Fatalf("no %s", key)
	}
	return g
}

func strs(ins []agentv1.Instance) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.String())
	}
	return out
}

// giIDs maps (GPU index, instance) to the GPU instance ID.
func giIDs(inv *agentv1.Inventory) map[[2]any]int {
	out := map[[2]any]int{}
	for _, g := range inv.GPUs {
		for _, gi := range g.Instances {
			out[[2]any{g.Index, gi.String()}] = gi.ID
		}
	}
	return out
}
