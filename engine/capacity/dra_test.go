package capacity_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestDRAPoolCapacity: a DRA pool's capacity is counted by what the
// tenants' quotas name, its DeviceClasses' device quotas (2 nodes x 8
// GPUs x 7 slices, 1 node x 4 whole GPUs), and a quota beyond it is
// refused as on a device-plugin pool.
func TestDRAPoolCapacity(t *testing.T) {
	src := func(slices, gpus string) string {
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
	nodes := []*unstructured.Unstructured{
		enginetest.GPUNode("a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 8, ""),
		enginetest.GPUNode("a100-1", "a100", "NVIDIA-A100-SXM4-80GB", 8, ""),
		enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 4, ""),
	}
	c, diags := capacity.CheckFrom(enginetest.LoadSource(t, src("112", "4")), nodes, nil, mig.Default())
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := map[string]int{
		"gpuform-cap-a100-1g-10gb.deviceclass.resource.k8s.io/devices": 112,
		"gpuform-cap-h100-gpu.deviceclass.resource.k8s.io/devices":     4,
	}
	if len(c.Rows) != len(want) {
		t.Fatalf("rows = %+v, want one per DeviceClass", c.Rows)
	}
	for _, r := range c.Rows {
		if n, ok := want[r.Resource]; !ok || r.Total != n || r.Quota != n {
			t.Errorf("row %+v, want total and quota %d of %s", r, n, r.Resource)
		}
	}
	_, diags = capacity.CheckFrom(enginetest.LoadSource(t, src("112", "5")), nodes, nil, mig.Default())
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "claim 5 of gpuform-cap-h100-gpu.deviceclass.resource.k8s.io/devices, but the pool has 4") {
		t.Fatalf("a quota over the H100s: %v", diags)
	}
}
