package capacity_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// draSrc is a DRA A100 pool in 1g.10gb x 7 and a DRA H100 pool of whole
// GPUs, tenant a's quotas on them given.
func draSrc(slices, gpus string) string {
	return `
gpuform { stack = "cap" }
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
pool "h100" {
  gpu           = "H100-80GB"
  mode          = "dra"
  node_selector = { "gpuform.dev/node-group" = "h100" }
}
tenant "a" {
  quota "a100" {
    slices = { "1g.10gb" = ` + slices + ` }
  }
  quota "h100" {
    gpus = ` + gpus + `
  }
}
`
}

// draNode is a node's ResourceSlice of NVIDIA's driver: gpus GPUs of
// product, each with the MIG devices of profiles (whole without).
func draNode(node, product string, gpus int, profiles ...string) *unstructured.Unstructured {
	var devs []capacity.DRADevice
	for minor := range gpus {
		devs = append(devs, capacity.DRAGPU(node, product, minor, profiles)...)
	}
	return capacity.DRASlice(engine.KindResourceSlice.GroupVersion().String(), node, devs)
}

// draNodes are the labelled nodes of draSrc's pools: their labels claim 8
// A100s and 4 H100s each, more than the driver publishes, so a count read
// from the labels shows.
func draNodes() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		enginetest.GPUNode("a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 8, ""),
		enginetest.GPUNode("a100-1", "a100", "NVIDIA-A100-SXM4-80GB", 8, ""),
		enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 8, ""),
	}
}

// otherDriver is a slice of another DRA driver on node h100-0, whose
// "gpu" devices gpuform must not count.
func otherDriver() *unstructured.Unstructured {
	u := draNode("h100-0", "NVIDIA H100 80GB HBM3", 4)
	u.SetName("h100-0-other")
	_ = unstructured.SetNestedField(u.Object, "gpu.example.com", "spec", "driver")
	_ = unstructured.SetNestedField(u.Object, "h100-0-other", "spec", "pool", "name")
	return u
}

// TestDRAPoolCapacityFromSlices: a DRA pool's GPUs are those NVIDIA's DRA
// driver publishes for its nodes (1 A100 in MIG with 7 1g.10gb devices and
// 2 whole A100s; 2 H100s), not what the nodes' labels claim, and not the
// devices of another driver; its rows are its DeviceClasses' device
// quotas, what the slices offer now before; a quota beyond them is refused
// as on a device-plugin pool.
func TestDRAPoolCapacityFromSlices(t *testing.T) {
	items := []*unstructured.Unstructured{
		draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"),
		draNode("a100-1", "NVIDIA A100-SXM4-80GB", 2),
		draNode("h100-0", "NVIDIA H100 80GB HBM3", 2),
		otherDriver(),
	}
	dra := capacity.DRADevicesOf(items, true)
	c, diags := capacity.CheckFrom(enginetest.LoadSource(t, draSrc("21", "2")), draNodes(), dra, nil, mig.Default())
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	type fig struct{ total, before int }
	want := map[string]fig{
		"gpuform-cap-a100-1g-10gb.deviceclass.resource.k8s.io/devices": {21, 7},
		"gpuform-cap-h100-gpu.deviceclass.resource.k8s.io/devices":     {2, 2},
	}
	if len(c.Rows) != len(want) {
		t.Fatalf("rows = %+v, want one per DeviceClass", c.Rows)
	}
	for _, r := range c.Rows {
		if w, ok := want[r.Resource]; !ok || r.Total != w.total || r.TotalBefore != w.before || r.Quota != w.total {
			t.Errorf("row %+v, want total and quota %d, before %d", r, w.total, w.before)
		}
	}
	_, diags = capacity.CheckFrom(enginetest.LoadSource(t, draSrc("21", "3")), draNodes(), dra, nil, mig.Default())
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "claim 3 of gpuform-cap-h100-gpu.deviceclass.resource.k8s.io/devices, but the pool has 2") {
		t.Fatalf("a quota over the H100s: %v", diags)
	}
}

// TestDRAPoolWithoutSlices: a DRA pool is never silently empty: on a
// cluster that does not serve ResourceSlices, or whose nodes of the pool
// publish no GPU of NVIDIA's driver (another driver's devices do not
// count), plan refuses it saying what to check; some nodes without
// devices are a warning naming them; devices of another GPU model an
// error.
func TestDRAPoolWithoutSlices(t *testing.T) {
	a100 := draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb")
	cases := []struct {
		name     string
		dra      capacity.DRAInventory
		severity string
		want     []string
	}{
		{"not served", capacity.DRAInventory{}, "error", []string{"DRA pool on a cluster without DRA", "Pool a100", "resource.k8s.io/v1"}},
		{"no slices", capacity.DRADevicesOf(nil, true), "error", []string{"DRA pool without devices", "Pool a100", "a100-0, a100-1", "gpu.nvidia.com", "kubelet plugin"}},
		{"another driver's only", capacity.DRADevicesOf([]*unstructured.Unstructured{a100, otherDriver()}, true), "error", []string{"DRA pool without devices", "Pool h100", "(h100-0)"}},
		{"one node bare", capacity.DRADevicesOf([]*unstructured.Unstructured{a100, draNode("h100-0", "NVIDIA H100 80GB HBM3", 1)}, true), "warning", []string{"Nodes without DRA devices", "Pool a100", "nodes a100-1 publish"}},
		{"other GPUs", capacity.DRADevicesOf([]*unstructured.Unstructured{a100, draNode("h100-0", "NVIDIA L40S", 1)}, true), "error", []string{"Nodes with other GPUs", "h100-0 (NVIDIA L40S)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := capacity.CheckFrom(enginetest.LoadSource(t, draSrc("0", "0")), draNodes(), tc.dra, nil, mig.Default())
			var got []string
			for _, d := range diags {
				sev := "warning"
				if d.Severity == hcl.DiagError {
					sev = "error"
				}
				got = append(got, sev+": "+d.Summary+": "+d.Detail)
			}
			i := slices.IndexFunc(got, func(s string) bool { return strings.HasPrefix(s, tc.severity+": "+tc.want[0]) })
			if i < 0 {
				t.Fatalf("no %s %q in %q", tc.severity, tc.want[0], got)
			}
			for _, w := range tc.want[1:] {
				if !strings.Contains(got[i], w) {
					t.Errorf("%q lacks %q", got[i], w)
				}
			}
		})
	}
}

// TestDRADevicesOf: the devices read back are those DRASlice wrote, a
// newer generation of a node's pool replaces the older, and slices of
// another driver or without a node are left out.
func TestDRADevicesOf(t *testing.T) {
	old := draNode("n", "NVIDIA A100-SXM4-80GB", 2)
	newer := draNode("n", "NVIDIA A100-SXM4-80GB", 1, "3g.40gb", "3g.40gb")
	newer.SetName("n-2")
	_ = unstructured.SetNestedField(newer.Object, int64(2), "spec", "pool", "generation")
	nodeless := draNode("m", "NVIDIA A100-SXM4-80GB", 1)
	unstructured.RemoveNestedField(nodeless.Object, "spec", "nodeName")
	inv := capacity.DRADevicesOf([]*unstructured.Unstructured{old, newer, nodeless, otherDriver()}, true)
	if len(inv.Nodes) != 1 || len(inv.Nodes["n"]) != 2 {
		t.Fatalf("nodes %+v, want n's generation 2 only", inv.Nodes)
	}
	for _, d := range inv.Nodes["n"] {
		if d.Type != capacity.DRATypeMIG || d.Profile != "3g.40gb" || d.Product != "NVIDIA A100-SXM4-80GB" || d.GPU != "GPU-n-0000" {
			t.Errorf("device %+v, want a 3g.40gb MIG device of GPU-n-0000", d)
		}
	}
	if n := capacity.GPUs(inv.Nodes["n"]); n != 1 {
		t.Errorf("GPUs = %d, want 1 (two MIG devices of one GPU)", n)
	}
}

// TestDRAModelsRequestTheirClass: a model on a DRA pool requests devices
// of the pool's DeviceClass for its slice (or whole GPUs), in that row,
// not in a row of the device plugin's resource the pool does not offer.
func TestDRAModelsRequestTheirClass(t *testing.T) {
	src := draSrc("7", "2") + `
model "m" {
  tenant      = tenant.a
  pool        = pool.a100
  slice       = "1g.10gb"
  format      = "onnx"
  storage_uri = "s3://models/m"
  replicas    = { min = 3, max = 4 }
}
`
	dra := capacity.DRADevicesOf([]*unstructured.Unstructured{
		draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb"),
		draNode("h100-0", "NVIDIA H100 80GB HBM3", 2),
	}, true)
	c, diags := capacity.CheckFrom(enginetest.LoadSource(t, src), draNodes(), dra, nil, mig.Default())
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, r := range c.Rows {
		want := 0
		if r.Resource == "gpuform-cap-a100-1g-10gb.deviceclass.resource.k8s.io/devices" {
			want = 3
		}
		if r.Requested != want || strings.HasPrefix(r.Resource, "nvidia.com/") {
			t.Errorf("row %+v, want requested %d and a DeviceClass's resource", r, want)
		}
	}
}

// TestDRADevicesOutsideThePool: a DeviceClass selects NVIDIA's devices by
// what the driver publishes of them, not by node, so a device of a DRA
// pool's GPU model and one of its classes' profiles that the driver
// publishes on a node outside the pool (another pool's, a device-plugin
// pool's, another stack's) is one a tenant's quota on the pool would
// admit: plan refuses the pool and names the node. A device of another
// model, or of a profile none of the pool's classes selects, is no such
// device.
func TestDRADevicesOutsideThePool(t *testing.T) {
	stray := enginetest.GPUNode("spare-0", "spare", "NVIDIA-H100-80GB-HBM3", 8, "")
	pools := []*unstructured.Unstructured{
		draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"),
		draNode("a100-1", "NVIDIA A100-SXM4-80GB", 1),
		draNode("h100-0", "NVIDIA H100 80GB HBM3", 2),
	}
	cases := []struct {
		name  string
		spare *unstructured.Unstructured
		want  []string // the error's words; none: no error
	}{
		{"whole H100s", draNode("spare-0", "NVIDIA H100 80GB HBM3", 2), []string{"DRA devices outside the pool", "Pool h100", "spare-0/gpu-0", "spare-0/gpu-1"}},
		{"A100 slices of the pool's profile", draNode("spare-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb"), []string{"DRA devices outside the pool", "Pool a100", "spare-0/gpu-0-mig-1g10gb-0 (1g.10gb)"}},
		{"A100 slices of another profile", draNode("spare-0", "NVIDIA A100-SXM4-80GB", 1, "3g.40gb"), nil},
		{"another model", draNode("spare-0", "NVIDIA L40S", 2), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dra := capacity.DRADevicesOf(append(slices.Clone(pools), tc.spare), true)
			_, diags := capacity.CheckFrom(enginetest.LoadSource(t, draSrc("1", "1")), append(draNodes(), stray), dra, nil, mig.Default())
			if tc.want == nil {
				if diags.HasErrors() {
					t.Fatalf("refused: %v", diags)
				}
				return
			}
			if !diags.HasErrors() {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(diags.Error(), w) {
					t.Errorf("error %q lacks %q", diags.Error(), w)
				}
			}
		})
	}
}

// TestDRAMIGLayoutAgainstDynamicMIG: with its DynamicMIG feature gate,
// NVIDIA's DRA driver (v25.12.0) publishes every MIG partition a GPU could
// hold as a device that consumes the GPU's shared counters, and makes the
// MIG device when a claim gets it; a pool's static layout (mig-manager or
// the agent) would fight it, so plan refuses a DRA pool with a
// mig_layout on such nodes. Static partitions (devices without counters)
// and a dynamic-MIG pool without a layout are fine.
func TestDRAMIGLayoutAgainstDynamicMIG(t *testing.T) {
	dynamic := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u = u.DeepCopy()
		devs, _, _ := unstructured.NestedSlice(u.Object, "spec", "devices")
		for _, d := range devs {
			d.(map[string]any)["consumesCounters"] = []any{map[string]any{"counterSet": "gpu-0-counter-set", "counters": map[string]any{"memory": map[string]any{"value": "10Gi"}}}}
		}
		_ = unstructured.SetNestedSlice(u.Object, devs, "spec", "devices")
		return u
	}
	static := []*unstructured.Unstructured{
		draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"),
		draNode("a100-1", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb"),
		draNode("h100-0", "NVIDIA H100 80GB HBM3", 2),
	}
	cases := []struct {
		name  string
		items []*unstructured.Unstructured
		want  string
	}{
		{"static partitions", static, ""},
		{"dynamic MIG under a layout", []*unstructured.Unstructured{static[0], dynamic(static[1]), static[2]}, "MIG layout on a dynamic-MIG pool"},
		{"dynamic MIG without a layout", []*unstructured.Unstructured{static[0], static[1], dynamic(static[2])}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := capacity.CheckFrom(enginetest.LoadSource(t, draSrc("1", "1")), draNodes(), capacity.DRADevicesOf(tc.items, true), nil, mig.Default())
			var errs []string
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d.Summary+": "+d.Detail)
				}
			}
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.want) || !strings.Contains(errs[0], "a100-1")):
				t.Fatalf("errors %v, want one %q naming a100-1", errs, tc.want)
			}
		})
	}
}

// TestDRADriverVersionFromSlices: a DRA pool's driver_version is checked
// against the driverVersion its nodes' devices publish (the node's labels
// are not read for a DRA pool): below it is "Driver too old", naming the
// node and the version; within it, nothing.
func TestDRADriverVersionFromSlices(t *testing.T) {
	src := strings.Replace(draSrc("7", "1"), "  node_selector = { \"gpuform.dev/node-group\" = \"h100\" }\n", "  node_selector = { \"gpuform.dev/node-group\" = \"h100\" }\n  driver_version = \">= 580\"\n", 1)
	slicesAt := func(driver string) capacity.DRAInventory {
		h100 := capacity.DRAGPU("h100-0", "NVIDIA H100 80GB HBM3", 0, nil)
		h100[0].Driver = driver
		gv := engine.KindResourceSlice.GroupVersion().String()
		return capacity.DRADevicesOf([]*unstructured.Unstructured{
			draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"),
			draNode("a100-1", "NVIDIA A100-SXM4-80GB", 1),
			capacity.DRASlice(gv, "h100-0", h100),
		}, true)
	}
	_, diags := capacity.CheckFrom(enginetest.LoadSource(t, src), draNodes(), slicesAt("570.86.15"), nil, mig.Default())
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Driver too old") || !strings.Contains(diags.Error(), "h100-0 (570.86.15)") {
		t.Errorf("an older driver published: %v, want Driver too old naming h100-0 (570.86.15)", diags)
	}
	if _, diags := capacity.CheckFrom(enginetest.LoadSource(t, src), draNodes(), slicesAt("580.65.6"), nil, mig.Default()); diags.HasErrors() {
		t.Errorf("a driver within driver_version: %v", diags.Error())
	}
}
