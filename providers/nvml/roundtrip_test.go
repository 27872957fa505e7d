//go:build linux && cgo

package nvml

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// layoutBefore is the layout annotation as engine's compile wrote it before
// api/agent/v1: the mig-parted entries as a map, through YAML to JSON. The
// bytes must stay: drift compares them with the nodes' annotation.
func layoutBefore(t *testing.T, l *config.MIGLayout) string {
	t.Helper()
	intMap := func(m map[string]int) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = int64(v)
		}
		return out
	}
	var entries []any
	if len(l.Devices) == 0 {
		entries = []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": intMap(l.Slices)}}
	}
	for _, g := range l.Devices {
		idx := make([]any, len(g.Indexes))
		for i, v := range g.Indexes {
			idx[i] = int64(v)
		}
		e := map[string]any{"devices": idx, "mig-enabled": g.Enabled}
		if g.Enabled {
			e["mig-devices"] = intMap(g.Slices)
		}
		entries = append(entries, e)
	}
	b, err := yaml.Marshal(map[string]any{"name": l.Name, "gpu": l.GPU, "config": entries})
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// TestWireRoundTrip runs both wire formats of api/agent/v1 end to end:
// engine's compile writes a pool's layout annotation (with the bytes it
// always had), the agent reads it and applies it to simulated GPUs, the
// agent publishes the inventory, and engine/capacity reads it back and
// counts the layout's instances.
func TestWireRoundTrip(t *testing.T) {
	tests := []struct {
		name, layout string
		want         map[string]int // MIG instances on the node
	}{
		{"all GPUs", `slices = { "3g.40gb" = 2 }`, map[string]int{"3g.40gb": 16}},
		{"per device", `device {
    indexes = [0, 1, 2, 3]
    slices  = { "1g.10gb" = 7 }
  }
  device {
    indexes = [4, 5, 6, 7]
    slices  = { "3g.40gb" = 2 }
  }`, map[string]int{"1g.10gb": 28, "3g.40gb": 8}},
		{"whole GPUs", `device {
    indexes = [0, 1]
    slices  = { "7g.80gb" = 1 }
  }
  device {
    indexes = [2, 3, 4, 5, 6, 7]
    enabled = false
  }`, map[string]int{"7g.80gb": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `
gpuform {
  stack       = "rt"
  mig_backend = "agent"
}
mig_layout "l" {
  gpu = "A100-80GB"
  ` + tt.layout + `
}
pool "a100" {
  gpu           = "A100-80GB"
  node_selector = { "gpuform.dev/node-group" = "a100" }
  mig_layout    = mig_layout.l
}
`
			cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if d := compile.Validate(cfg, mig.Default()); d.HasErrors() {
				t.Fatal(d.Error())
			}
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			layout := d.Pools[0].Annotations[agentv1.AnnotMIGLayout]
			if want := layoutBefore(t, cfg.MIGLayouts[0]); layout != want {
				t.Fatalf("layout annotation changed:\n got %s\nwant %s", layout, want)
			}

			n := newSimNode(t, "A100-80GB")
			f := newFakeNode(map[string]string{agentv1.AnnotMIGLayout: layout})
			startAgent(t, n.srv, f, AgentOptions{})
			waitState(t, f, agentv1.StateSuccess)

			node := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Node",
				"metadata": map[string]any{"name": "a100-0",
					"labels":      map[string]any{"gpuform.dev/node-group": "a100", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8"},
					"annotations": map[string]any{agentv1.AnnotInventory: f.get(agentv1.AnnotInventory)}},
			}}
			inv := capacity.InventoryOf(node, mig.Default())
			want := tt.want
			if inv.Source != capacity.SourceAgent || inv.Warning != "" || inv.GPUs != 8 || len(inv.MIG) != len(want) {
				t.Fatalf("capacity reads %+v", inv)
			}
			for prof, c := range want {
				if inv.MIG[prof] != c {
					t.Errorf("%s instances = %d, want %d", prof, inv.MIG[prof], c)
				}
			}
			rep, cdiags := capacity.CheckFrom(cfg, []*unstructured.Unstructured{node}, capacity.DRAInventory{}, nil, mig.Default())
			if cdiags.HasErrors() {
				t.Fatal(cdiags.Error())
			}
			if len(rep.Rows) == 0 {
				t.Fatal("no capacity rows")
			}
			for _, r := range rep.Rows {
				// A MIG pool's figure now counts MIG instances only.
				if r.Resource != mig.ResourceGPU && r.TotalBefore != r.Total {
					t.Errorf("%s: the node offers %d now, the layout %d", r.Resource, r.TotalBefore, r.Total)
				}
			}
		})
	}
}
