package drift_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

const draDriftSrc = `
gpuform { stack = "d" }
mig_layout "sevens" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 7 }
}
pool "a100" {
  gpu           = "A100-80GB"
  mode          = "dra"
  node_selector = { "gpuform.dev/node-group" = "a100" }
  mig_layout    = mig_layout.sevens
}
`

// TestDriftDRADevices: drift reads a DRA pool's nodes from what NVIDIA's
// DRA driver publishes: a node whose devices vanished, one with another
// number of GPUs than the pool's other nodes, and, on a node whose layout
// is in place, MIG devices that vanished or appeared against the layout;
// nodes that publish the layout's devices are in sync.
func TestDriftDRADevices(t *testing.T) {
	cfg := enginetest.LoadSource(t, draDriftSrc)
	parted, _ := engine.MIGPartedName(cfg.MIGLayouts[0])
	node := func(name string, done bool) *unstructured.Unstructured {
		n := enginetest.GPUNode(name, "a100", "NVIDIA-A100-SXM4-80GB", 1, "")
		if done {
			l := n.GetLabels()
			l[engine.LabelMIGState], l[engine.LabelMIGConfig] = "success", parted
			n.SetLabels(l)
		}
		return n
	}
	seven := []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}
	slice := func(name string, gpus int, profiles ...string) *unstructured.Unstructured {
		var devs []capacity.DRADevice
		for minor := range gpus {
			devs = append(devs, capacity.DRAGPU(name, "NVIDIA A100-SXM4-80GB", minor, profiles)...)
		}
		return capacity.DRASlice(engine.KindResourceSlice.GroupVersion().String(), name, devs)
	}
	live := &engine.Live{
		Nodes: []*unstructured.Unstructured{node("ok-0", true), node("ok-1", true), node("changed", true), node("gone", true), node("two", false)},
		DRA: capacity.DRADevicesOf([]*unstructured.Unstructured{
			slice("ok-0", 1, seven...), slice("ok-1", 1, seven...),
			slice("changed", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "2g.20gb"),
			slice("two", 2),
		}, true),
	}
	items := drift.CheckHardware(cfg, live, mig.Default())
	want := map[string]string{
		"changed": "NVIDIA's DRA driver publishes MIG devices 1g.10gb x5, 2g.20gb x1 where layout sevens on 1 GPU makes 1g.10gb x7: vanished 1g.10gb x2, appeared 2g.20gb x1",
		"gone":    "publishes no GPU in a ResourceSlice of NVIDIA's DRA driver (gpu.nvidia.com): its devices vanished",
		"two":     "NVIDIA's DRA driver publishes 2 GPUs where the pool's other nodes have 1",
	}
	if len(items) != len(want) {
		t.Errorf("items %+v, want one for each of %v", items, want)
	}
	for _, it := range items {
		if w, ok := want[it.Name]; !ok || !strings.Contains(strings.Join(it.Details, " "), w) || it.Class != drift.Hardware {
			t.Errorf("%s: %s %q, want hardware %q", it.Name, it.Class, it.Details, w)
		}
	}
}

// TestDriftDRADriverVersion: a DRA pool's driver is the driverVersion its
// nodes' devices publish, not what their labels say: a node whose devices
// publish a driver below driver_version drifts though its labels claim a
// newer one, and one whose devices publish a driver within it is in sync
// though its labels claim an older one; a node whose devices publish no
// version is read from its labels.
func TestDriftDRADriverVersion(t *testing.T) {
	cfg := enginetest.LoadSource(t, strings.Replace(draDriftSrc, "  mig_layout    = mig_layout.sevens\n", "  driver_version = \">= 580\"\n", 1))
	gv := engine.KindResourceSlice.GroupVersion().String()
	slice := func(name, driver string) *unstructured.Unstructured {
		devs := capacity.DRAGPU(name, "NVIDIA A100-SXM4-80GB", 0, nil)
		devs[0].Driver = driver
		return capacity.DRASlice(gv, name, devs)
	}
	live := &engine.Live{
		Nodes: []*unstructured.Unstructured{
			enginetest.GPUNode("old", "a100", "NVIDIA-A100-SXM4-80GB", 1, "580.65.06"),
			enginetest.GPUNode("new", "a100", "NVIDIA-A100-SXM4-80GB", 1, "570.86.15"),
			enginetest.GPUNode("unversioned", "a100", "NVIDIA-A100-SXM4-80GB", 1, "570.86.15"),
		},
		DRA: capacity.DRADevicesOf([]*unstructured.Unstructured{slice("old", "570.86.15"), slice("new", "580.65.6"), slice("unversioned", "")}, true),
	}
	items := drift.CheckHardware(cfg, live, mig.Default())
	want := map[string]string{
		"old":         "runs driver 570.86.15; pool a100 needs >= 580",
		"unversioned": "runs driver 570.86.15; pool a100 needs >= 580",
	}
	if len(items) != len(want) {
		t.Errorf("items %+v, want one for each of %v", items, want)
	}
	for _, it := range items {
		if w, ok := want[it.Name]; !ok || !strings.Contains(strings.Join(it.Details, " "), w) || it.Class != drift.Hardware {
			t.Errorf("%s: %s %q, want hardware %q", it.Name, it.Class, it.Details, w)
		}
	}
}
