package capacity_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// inventorySnippets are hand-written inventory annotations.
var inventorySnippets = []string{
	``,
	`null`,
	`{}`,
	`[]`,
	`{"version":1}`,
	`{"version":1,"gpus":null}`,
	`{"version":2,"gpus":[]}`,
	`{"version":1,"driver_version":"550.54.15","gpus":[{"index":0,"name":"NVIDIA A100-SXM4-80GB","memory_mib":81920,"mig_enabled":true,"instances":[{"profile":"3g.40gb","start":0,"size":4},{"profile":"3g.40gb","start":4,"size":4}]}]}`,
	`{"version":1,"gpus":[{"index":0,"name":"L40S"},{"index":0,"name":"L40S"}]}`,
	`{"version":1,"gpus":[{"index":-1}]}`,
	`{"version":1,"gpus":[{"index":64}]}`,
	`{"version":1,"gpus":[{"index":9223372036854775807}]}`,
	`{"version":1,"gpus":[{"index":1,"memory_mib":-1}]}`,
	`{"version":1,"gpus":[{"index":1,"model":"","name":"","processes":[{"pid":1}],"instances":[{"profile":"","start":-3,"size":0}]}]}`,
	`{"version":1,"gpus":[{"index":"0"}]}`,
	"{\"version\":1,\"gpus\":[{\"index\":3,\"name\":\"\xff\\u0000 h100 80gb hbm3-mig-1g.10gb\"}]}",
	`{"version":1.0,"gpus":[{"index":1e0}]}`,
}

// FuzzParseAgentInventory feeds arbitrary annotations to the inventory
// parser. It must never panic; an inventory it accepts has at most
// maxNodeGPUs GPUs with unique indexes in range; and InventoryOf of a Node
// carrying it must not panic and must count what it trusted.
func FuzzParseAgentInventory(f *testing.F) {
	const maxNodeGPUs = 64
	files, _ := filepath.Glob(filepath.Join("..", "..", "providers", "nvml", "testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range inventorySnippets {
		f.Add(s)
	}
	cat := mig.Default()
	gfd := map[string]any{
		"nvidia.com/gpu.product":       "NVIDIA-H100-80GB-HBM3",
		"nvidia.com/gpu.count":         "8",
		"nvidia.com/gpu.memory":        "81559",
		"nvidia.com/cuda.driver.major": "550",
		"nvidia.com/cuda.driver.minor": "54",
		"nvidia.com/mig-1g.10gb.count": "7",
		"nvidia.com/mig-bogus.count":   "-1",
	}
	f.Fuzz(func(t *testing.T, s string) {
		inv, err := agentv1.ParseInventory(s)
		if err == nil {
			if inv == nil {
				t.Fatal("no inventory and no error")
			}
			if len(inv.GPUs) > maxNodeGPUs {
				t.Fatalf("accepted %d GPUs", len(inv.GPUs))
			}
			seen := map[int]bool{}
			for _, g := range inv.GPUs {
				if g.Index < 0 || g.Index >= maxNodeGPUs || seen[g.Index] {
					t.Fatalf("accepted GPU index %d (seen %v)", g.Index, seen[g.Index])
				}
				seen[g.Index] = true
				if g.MemoryMiB < 0 {
					t.Fatalf("accepted memory %d MiB", g.MemoryMiB)
				}
			}
		}
		for _, labels := range []map[string]any{nil, gfd} {
			n := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Node",
				"metadata": map[string]any{"name": "gpu-1", "labels": labels, "annotations": map[string]any{agentv1.AnnotInventory: s}},
				"status":   map[string]any{"capacity": map[string]any{mig.ResourceGPU: "8"}},
			}}
			got := capacity.InventoryOf(n, cat)
			if got.Source == "agent" {
				if err != nil || got.GPUs != len(inv.GPUs) {
					t.Fatalf("InventoryOf trusted the annotation (parse error %v): %+v", err, got)
				}
			}
			if s != "" && err != nil && got.Warning == "" {
				t.Fatalf("InventoryOf ignored a bad annotation without a warning: %+v", got)
			}
		}
	})
}
