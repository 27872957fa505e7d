package capacity_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

const pluginSrc = `
gpuform { stack = "cap" }
pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "h100" }
}
tenant "a" {
  quota "h100" {
    gpus = 1
  }
}
`

// advertising is a labelled H100 node whose status advertises 8
// nvidia.com/gpu (the device plugin runs there) or none.
func advertising(name string, plugin bool) *unstructured.Unstructured {
	n := enginetest.GPUNode(name, "h100", "NVIDIA-H100-80GB-HBM3", 8, "")
	c := map[string]any{"cpu": "64"}
	if plugin {
		c["nvidia.com/gpu"] = "8"
	}
	n.Object["status"] = map[string]any{"capacity": c, "allocatable": c}
	return n
}

// TestKnowTheStack: plan says which GPU stack it found (the GPU Operator's
// DRA stack, the nodes of NVIDIA's DRA driver and of the device plugin)
// when the GPU Operator's DRA stack or a DRA pool is about, nothing for a
// device-plugin configuration without them (the driver's slices alone);
// it refuses a device-plugin pool whose nodes advertise no nvidia.com
// resource under the DRA stack (a GPUCluster, or the driver publishing
// their GPUs), and lets it be where the device plugin runs or no DRA
// stack is seen.
func TestKnowTheStack(t *testing.T) {
	cfg := enginetest.LoadSource(t, pluginSrc)
	h100Slice := draNode("h100-0", "NVIDIA H100 80GB HBM3", 8)
	cases := []struct {
		name    string
		plugin  bool
		dra     capacity.DRAInventory
		stack   string
		refusal string
	}{
		{"device plugin", true, capacity.DRADevicesOf(nil, true), "", ""},
		{"labels only, no DRA stack", false, capacity.DRADevicesOf(nil, true), "", ""},
		{"GPUCluster, plugin still runs", true, capacity.DRAInventory{Served: true, GPUClusters: []string{"gpu-cluster"}},
			"the GPU Operator runs its DRA stack (GPUCluster gpu-cluster); NVIDIA's DRA driver publishes the GPUs of 0 nodes; the device plugin advertises nvidia.com resources on 1 node", ""},
		{"GPUCluster, no plugin", false, capacity.DRAInventory{Served: true, GPUClusters: []string{"gpu-cluster"}},
			"the GPU Operator runs its DRA stack", "its nodes (h100-0) advertise no nvidia.com resource: the GPU Operator's DRA stack (GPUCluster gpu-cluster) offers their GPUs"},
		{"driver slices, plugin runs", true, capacity.DRADevicesOf([]*unstructured.Unstructured{h100Slice}, true), "", ""},
		{"driver slices, no plugin", false, capacity.DRADevicesOf([]*unstructured.Unstructured{h100Slice}, true),
			"", "NVIDIA's DRA driver (gpu.nvidia.com) offers their GPUs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []*unstructured.Unstructured{advertising("h100-0", tc.plugin)}
			rep, diags := capacity.CheckFrom(cfg, nodes, tc.dra, nil, mig.Default())
			if tc.refusal == "" {
				if diags.HasErrors() {
					t.Fatal(diags.Error())
				}
				if rep.Stack != tc.stack && (tc.stack == "" || !strings.Contains(rep.Stack, tc.stack)) {
					t.Errorf("stack %q, want %q", rep.Stack, tc.stack)
				}
				return
			}
			if !diags.HasErrors() || !strings.Contains(diags.Error(), "Device-plugin pool on the DRA stack") || !strings.Contains(diags.Error(), tc.refusal) || !strings.Contains(diags.Error(), `Set mode = "dra"`) {
				t.Errorf("diagnostics %v, want the refusal %q", diags, tc.refusal)
			}
			if !strings.Contains(rep.Stack, tc.stack) {
				t.Errorf("stack %q, want %q", rep.Stack, tc.stack)
			}
		})
	}
	// A DRA pool in the configuration: plan says so even without a GPUCluster.
	rep, _ := capacity.CheckFrom(enginetest.LoadSource(t, draSrc("0", "0")), draNodes(), capacity.DRAInventory{}, nil, mig.Default())
	if want := "the cluster does not serve ResourceSlices (resource.k8s.io/v1)"; !strings.Contains(rep.Stack, want) {
		t.Errorf("stack %q, want %q", rep.Stack, want)
	}
}
