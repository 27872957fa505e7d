package capacity_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// inventoryNode is a Node with the given labels, nvidia.com/gpu capacity
// (none when "") and inventory annotation.
func inventoryNode(labels map[string]any, capacity, annotation string) *unstructured.Unstructured {
	status := map[string]any{}
	if capacity != "" {
		status["capacity"] = map[string]any{mig.ResourceGPU: capacity}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "gpu-1", "labels": labels, "annotations": map[string]any{agentv1.AnnotInventory: annotation}},
		"status":   status,
	}}
}

// agentGPUs is an inventory annotation of n GPUs named name, each with the
// given MIG instances (MIG on when there are any).
func agentGPUs(n int, name string, instances ...agentv1.GPUInstance) string {
	inv := agentv1.Inventory{Version: 1, DriverVersion: "550.54.15"}
	for i := range n {
		inv.GPUs = append(inv.GPUs, agentv1.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Name: name, MemoryMiB: 81920, MIGEnabled: len(instances) > 0, Instances: instances})
	}
	b, err := json.Marshal(inv)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestInventoryAnnotationTampering: an inventory annotation written by
// something other than the agent that is malformed or lies about the GPUs
// (their count, model or MIG instances, against the node's GPU Feature
// Discovery labels, its capacity and the catalog) is not trusted: gpuform
// falls back to the labels or the capacity and says why in a warning, which
// the plan shows.
func TestInventoryAnnotationTampering(t *testing.T) {
	gfdA100 := map[string]any{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "4"}
	in := func(profile string, start, size int) agentv1.GPUInstance {
		return agentv1.GPUInstance{Instance: agentv1.Instance{Profile: profile, Start: start, Size: size}}
	}
	cases := []struct {
		name       string
		labels     map[string]any
		capacity   string
		annotation string
		// source and gpus are what gpuform trusts; warning is part of the
		// warning ("" for none).
		source  string
		gpus    int
		warning string
	}{
		{
			name: "agent-honest", labels: gfdA100, capacity: "16",
			annotation: agentGPUs(4, "NVIDIA A100-SXM4-80GB", in("3g.40gb", 0, 4), in("3g.40gb", 4, 4)),
			source:     "agent", gpus: 4,
		},
		{
			name: "malformed-json", labels: gfdA100, annotation: `{"version": 1, "gpus": [`,
			source: "gfd", gpus: 4, warning: "ignored the gpuform.dev/inventory annotation: inventory is not valid JSON",
		},
		{
			name: "more-gpus-than-gfd", labels: gfdA100, annotation: agentGPUs(8, "NVIDIA A100-SXM4-80GB"),
			source: "gfd", gpus: 4, warning: "it lists 8 GPUs but GPU Feature Discovery counts 4 (label nvidia.com/gpu.count)",
		},
		{
			name: "more-gpus-than-capacity", capacity: "2", annotation: agentGPUs(4, "NVIDIA A100-SXM4-80GB"),
			source: "capacity", gpus: 2, warning: "it lists 4 GPUs but the node's capacity is 2 nvidia.com/gpu",
		},
		{
			name: "other-model-than-gfd", labels: gfdA100, annotation: agentGPUs(4, "NVIDIA H100 80GB HBM3"),
			source: "gfd", gpus: 4, warning: "the inventory annotation says H100-80GB but GPU Feature Discovery says NVIDIA-A100-SXM4-80GB",
		},
		{
			name: "mig-on-a-gpu-without-mig", capacity: "1", annotation: agentGPUs(1, "NVIDIA L40S", in("1g.10gb", 0, 1)),
			source: "capacity", gpus: 1, warning: "GPU 0 is a L40S, which has no MIG, but it lists MIG instances",
		},
		{
			name: "unknown-profile", labels: gfdA100, annotation: agentGPUs(4, "NVIDIA A100-SXM4-80GB", in("9g.99gb", 0, 8)),
			source: "gfd", gpus: 4, warning: `GPU 0 lists MIG profile "9g.99gb", which a A100-80GB does not have`,
		},
		{
			name: "impossible-placement", labels: gfdA100, annotation: agentGPUs(4, "NVIDIA A100-SXM4-80GB", in("3g.40gb", 2, 4)),
			source: "gfd", gpus: 4, warning: "GPU 0 lists a 3g.40gb instance at 2:4, not a placement a A100-80GB has",
		},
		{
			name: "overlapping-instances", labels: gfdA100, annotation: agentGPUs(4, "NVIDIA A100-SXM4-80GB", in("3g.40gb", 0, 4), in("1g.10gb", 3, 1)),
			source: "gfd", gpus: 4, warning: "GPU 0 lists MIG instances that overlap at memory slot 3",
		},
		{
			name: "beyond-the-slots", labels: gfdA100, annotation: agentGPUs(4, "NVIDIA A100-SXM4-80GB", in("7g.80gb", 4, 8)),
			source: "gfd", gpus: 4, warning: "impossible MIG instance",
		},
		{
			name: "oversized", labels: gfdA100, annotation: `{"version":1,"driver_version":"` + strings.Repeat("9", 70_000) + `"}`,
			source: "gfd", gpus: 4, warning: "over the limit of 65536",
		},
	}
	cat := mig.Default()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := inventoryNode(c.labels, c.capacity, c.annotation)
			got := capacity.InventoryOf(n, cat)
			if got.Source != c.source || got.GPUs != c.gpus {
				t.Errorf("trusted %s with %d GPUs; want %s with %d", got.Source, got.GPUs, c.source, c.gpus)
			}
			if c.warning == "" && got.Warning != "" || !strings.Contains(got.Warning, c.warning) {
				t.Errorf("warning %q; want one with %q", got.Warning, c.warning)
			}
			warnings := capacity.InventoryWarnings(nil, []*unstructured.Unstructured{n}, cat)
			if c.warning == "" && len(warnings) != 0 || c.warning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0].Summary, "Node gpu-1: ")) {
				t.Errorf("plan warnings %q", warnings)
			}
		})
	}
}

// TestInventoryMIGOff: MIG instances on a GPU that says its MIG is off are
// a lie too.
func TestInventoryMIGOff(t *testing.T) {
	inv := agentv1.Inventory{Version: 1, GPUs: []agentv1.GPU{{Index: 0, Name: "NVIDIA A100-SXM4-80GB", Instances: []agentv1.GPUInstance{{Instance: agentv1.Instance{Profile: "7g.80gb", Start: 0, Size: 8}}}}}}
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	got := capacity.InventoryOf(inventoryNode(nil, "1", string(b)), mig.Default())
	if got.Source != "capacity" || !strings.Contains(got.Warning, "GPU 0 has MIG instances but MIG is off") {
		t.Errorf("got %+v", got)
	}
}

// TestInventoryWarningsPointAtThePool: a warning about a node's inventory
// carries the range of the block of the first pool that selects the node,
// and renders as validation diagnostics do (file, line, source line); a
// node no pool selects gets a warning without a position.
func TestInventoryWarningsPointAtThePool(t *testing.T) {
	src := `gpuform { stack = "inv" }

pool "other" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "h100" }
}

pool "a100" {
  gpu           = "A100-80GB"
  node_selector = { "gpuform.dev/node-group" = "a100" }
}
`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	bad := `{"version":1,"gpus":[{"index":0},{"index":0}]}`
	selected := inventoryNode(map[string]any{"gpuform.dev/node-group": "a100", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1"}, "", bad)
	selected.SetName("gpu-a")
	stray := inventoryNode(map[string]any{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1"}, "", bad)
	stray.SetName("gpu-b")
	good := inventoryNode(map[string]any{"gpuform.dev/node-group": "a100"}, "1", agentGPUs(1, "NVIDIA A100-SXM4-80GB"))
	good.SetName("gpu-c")

	warnings := capacity.InventoryWarnings(cfg, []*unstructured.Unstructured{stray, good, selected}, mig.Default())
	if len(warnings) != 2 {
		t.Fatalf("warnings = %v, want one per untrusted annotation", warnings)
	}
	a100 := cfg.Pools[1]
	if w := warnings[0]; w.Severity != hcl.DiagWarning || !strings.HasPrefix(w.Summary, "Node gpu-a: ignored the gpuform.dev/inventory annotation") || w.Subject == nil || *w.Subject != a100.DeclRange {
		t.Errorf("warning about gpu-a = %+v, want one at pool a100's block %v", w, a100.DeclRange)
	}
	if w := warnings[1]; !strings.HasPrefix(w.Summary, "Node gpu-b: ") || w.Subject != nil {
		t.Errorf("warning about gpu-b = %+v, want one without a position", w)
	}
	var buf bytes.Buffer
	if err := (&config.DiagnosticWriter{Files: cfg.Files}).Write(&buf, warnings[:1]); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.HasPrefix(got, "Warning: Node gpu-a: ignored") || !strings.Contains(got, "\n  on main.hcl line 8, in pool \"a100\":\n") || !strings.Contains(got, `   8: pool "a100" {`) {
		t.Errorf("rendered:\n%s", got)
	}
}

// A pool's selector selects a Node whose labels hold every one of its
// labels, read in place, as GetLabels would give them.
func TestSelectsNode(t *testing.T) {
	node := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"name":   "gpu-1",
		"labels": map[string]any{"pool": "a100", "zone": "z1", "empty": ""},
	}}}
	bare := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "bare"}}}
	for _, tc := range []struct {
		name string
		sel  map[string]string
		n    *unstructured.Unstructured
		want bool
	}{
		{"every label matches", map[string]string{"pool": "a100", "zone": "z1"}, node, true},
		{"one label differs", map[string]string{"pool": "a100", "zone": "z2"}, node, false},
		{"a label the node lacks", map[string]string{"pool": "a100", "rack": "r1"}, node, false},
		{"an empty value the node has", map[string]string{"empty": ""}, node, true},
		{"an empty selector", nil, node, false},
		{"a node without labels", map[string]string{"pool": "a100"}, bare, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := capacity.SelectsNode(tc.sel, tc.n); got != tc.want {
				t.Errorf("SelectsNode(%v, %v) = %v, want %v", tc.sel, tc.n.GetLabels(), got, tc.want)
			}
		})
	}
}
