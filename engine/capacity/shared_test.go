package capacity_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// sharedConfig is an MPS pool of 4 replicas per H100, a time-sliced L4
// pool of 3 replicas advertised as nvidia.com/gpu.shared, and a pool of
// whole H200s (tenant b's: a tenant holds nvidia.com/gpu on one pool only);
// GPUS is tenant a's quota on the renamed pool.
const sharedConfig = `
gpuform { stack = "cap" }
pool "mps" {
  gpu = "H100-80GB"
  mps {
    replicas = 4
  }
}
pool "ts" {
  gpu = "L4"
  time_slicing {
    replicas          = 3
    rename_by_default = true
  }
}
pool "whole" {
  gpu = "H200-141GB"
}
tenant "a" {
  quota "mps" {
    gpus = 8
  }
  quota "ts" {
    gpus = GPUS
  }
}
tenant "b" {
  quota "whole" {
    gpus = 2
  }
}
model "m" {
  tenant      = tenant.a
  pool        = pool.ts
  format      = "onnx"
  storage_uri = "s3://m"
  replicas    = { min = 2, max = 2 }
}
`

// MPS replicas multiply a pool's GPUs like time-slicing replicas, and a
// renamed pool's replicas are their own resource: quotas, requests and the
// over-capacity error count nvidia.com/gpu.shared apart from the whole GPUs
// of the other pools.
func TestCapacitySharedPools(t *testing.T) {
	nodes := []*unstructured.Unstructured{
		enginetest.GPUNode("h100-0", "mps", "NVIDIA-H100-80GB-HBM3", 2, ""),
		enginetest.GPUNode("l4-0", "ts", "NVIDIA-L4", 4, ""),
		enginetest.GPUNode("h200-0", "whole", "NVIDIA-H200", 2, ""),
	}
	cfg := enginetest.LoadSource(t, strings.Replace(sharedConfig, "GPUS", "12", 1))
	c, diags := capacity.CheckFrom(cfg, nodes, capacity.DRAInventory{}, nil, mig.Default())
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := []capacity.Row{
		// Two pools offer nvidia.com/gpu, so the applied quotas cannot say
		// which one's they are (QuotaBefore -1); nvidia.com/gpu.shared only one.
		{Pool: "mps", Resource: "nvidia.com/gpu", Total: 8, Quota: 8, Free: 0, Limit: 8, TotalBefore: 8, QuotaBefore: -1},
		{Pool: "ts", Resource: "nvidia.com/gpu.shared", Total: 12, Quota: 12, Requested: 2, Free: 0, Limit: 12, TotalBefore: 12},
		{Pool: "whole", Resource: "nvidia.com/gpu", Total: 2, Quota: 2, Free: 0, Limit: 2, TotalBefore: 2, QuotaBefore: -1},
	}
	if len(c.Rows) != len(want) {
		t.Fatalf("rows = %+v", c.Rows)
	}
	for i, r := range c.Rows {
		if r != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, r, want[i])
		}
	}
	cfg = enginetest.LoadSource(t, strings.Replace(sharedConfig, "GPUS", "13", 1))
	_, diags = capacity.CheckFrom(cfg, nodes, capacity.DRAInventory{}, nil, mig.Default())
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "claim 13 of nvidia.com/gpu.shared, but the pool has 12 (1 node, 4 GPUs x 3 time-slicing replicas)") {
		t.Fatalf("a quota over the renamed pool's replicas: %v", diags)
	}
	if s := diags[0].Subject; s == nil || s.Start.Line != 24 {
		t.Errorf("the error is at %v, want the ts quota's gpus (line 24)", s)
	}
}
