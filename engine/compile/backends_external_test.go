package compile_test

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestCompileNodePools checks what each MIG backend asks of a MIG pool's
// nodes and models, and that a time-sliced pool goes to the device plugin
// whichever the MIG backend.
func TestCompileNodePools(t *testing.T) {
	migCM := engine.Key{Kind: "ConfigMap", Namespace: "gpu-operator", Name: engine.MIGPartedConfig}
	dpCM := engine.Key{Kind: "ConfigMap", Namespace: "gpu-operator", Name: engine.DevicePluginConf}
	tests := []struct {
		name      string
		replace   []string
		state     string
		label     string // the label naming the layout; "" for none
		annot     string // the annotation holding the layout; "" for none
		poolDeps  []engine.Key
		modelDeps bool // whether a model on a MIG slice waits for the mig-parted ConfigMap
	}{
		{"gpu-operator", nil, engine.LabelMIGState, engine.LabelMIGConfig, "", []engine.Key{migCM}, true},
		{"agent", append(enginetest.BankUnder("none"), `scheduler = "none"`, `mig_backend = "agent"`), agentv1.AnnotMIGState, "", agentv1.AnnotMIGLayout, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := enginetest.LoadExample(t, "bank", tt.replace...)
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			pools := map[string]*engine.NodePool{}
			for _, p := range d.Pools {
				pools[p.Pool] = p
			}
			a100, h100 := pools["a100"], pools["h100"]
			if a100 == nil || h100 == nil {
				t.Fatalf("pools %v, want a100 and h100", pools)
			}
			if a100.MIGState != tt.state || h100.MIGState != "" {
				t.Errorf("MIG state keys %q and %q, want %q and none", a100.MIGState, h100.MIGState, tt.state)
			}
			name, _ := engine.MIGPartedName(cfg.Pools[0].MIGLayout)
			if got := a100.Labels[engine.LabelMIGConfig]; (tt.label != "") != (got != "") || (got != "" && got != name) {
				t.Errorf("label %s = %q (want it %t, as %q)", engine.LabelMIGConfig, got, tt.label != "", name)
			}
			if got := a100.Annotations[agentv1.AnnotMIGLayout]; (tt.annot != "") != (got != "") || (got != "" && !strings.Contains(got, `"name":"balanced"`)) {
				t.Errorf("annotation %s = %q (want it %t, naming layout balanced)", agentv1.AnnotMIGLayout, got, tt.annot != "")
			}
			if !equalKeys(a100.DependsOn, tt.poolDeps) {
				t.Errorf("MIG pool depends on %v, want %v", a100.DependsOn, tt.poolDeps)
			}
			if h100.Labels[engine.LabelDPConfig] != "h100" || !equalKeys(h100.DependsOn, []engine.Key{dpCM}) {
				t.Errorf("time-sliced pool: labels %v, depends on %v; want %s=h100 and the device-plugin ConfigMap", h100.Labels, h100.DependsOn, engine.LabelDPConfig)
			}
			if (d.Lookup(migCM) != nil) != tt.modelDeps || d.Lookup(dpCM) == nil {
				t.Errorf("mig-parted ConfigMap compiled %t (want %t), device-plugin ConfigMap %t (want true)", d.Lookup(migCM) != nil, tt.modelDeps, d.Lookup(dpCM) != nil)
			}
			sliced := 0
			for _, o := range d.Objects {
				if o.Object.GetKind() != "InferenceService" || cfgModel(cfg, o.Address) == "" {
					continue
				}
				sliced++
				if got := hasKey(o.DependsOn, migCM); got != tt.modelDeps {
					t.Errorf("%s waits for the mig-parted ConfigMap: %t, want %t", o.Address, got, tt.modelDeps)
				}
			}
			if sliced == 0 {
				t.Fatal("no model on a MIG slice in the example")
			}
		})
	}
}

// TestCompiledNodesAreWhatDriftReads puts a MIG pool's compiled labels and
// annotations on a node, with its MIG state "success", and checks that drift
// sees the layout as in place (and so compares MIG instances), under each
// MIG backend: the writer (compile) and the reader (drift) agree.
func TestCompiledNodesAreWhatDriftReads(t *testing.T) {
	for _, backend := range []struct{ name, replace string }{
		{"gpu-operator", `scheduler = "kueue"`},
		{"agent", "scheduler = \"kueue\"\n  mig_backend = \"agent\""},
	} {
		for _, instances := range []int{1, 2} {
			cfg := enginetest.LoadExample(t, "bank", `scheduler = "kueue"`, backend.replace)
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			np := d.Pools[0]
			if np.Pool != "a100" {
				t.Fatalf("first pool %s, want a100", np.Pool)
			}
			// As GPU Feature Discovery labels a node of one A100 with layout
			// balanced (1g.10gb x 2, 2g.20gb, 3g.40gb), or with one 3g.40gb
			// too many.
			labels := map[string]any{
				"nvidia.com/gpu.product":       "NVIDIA-A100-SXM4-80GB",
				"nvidia.com/gpu.count":         "1",
				"nvidia.com/mig-1g.10gb.count": "2",
				"nvidia.com/mig-2g.20gb.count": "1",
				"nvidia.com/mig-3g.40gb.count": strconv.Itoa(instances),
			}
			annotations := map[string]any{}
			for k, v := range np.Selector {
				labels[k] = v
			}
			for k, v := range np.Labels {
				labels[k] = v
			}
			for k, v := range np.Annotations {
				annotations[k] = v
			}
			if np.MIGState == engine.LabelMIGState {
				labels[np.MIGState] = "success"
			} else {
				annotations[np.MIGState] = "success"
			}
			node := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Node",
				"metadata": map[string]any{"name": "gpu-0", "labels": labels, "annotations": annotations},
			}}
			var details []string
			for _, it := range drift.CheckHardware(cfg, &engine.Live{Nodes: []*unstructured.Unstructured{node}}, mig.Default()) {
				details = append(details, it.Details...)
			}
			found := strings.Contains(strings.Join(details, "\n"), "MIG state is success but the node has MIG instances")
			if found != (instances != 1) {
				t.Errorf("%s backend, %d instances of 3g.40gb where the layout has 1: drift details %q", backend.name, instances, details)
			}
		}
	}
}

// cfgModel returns the MIG slice of the model at address, "" when it asks
// for whole GPUs or there is no such model.
func cfgModel(cfg *config.Config, address string) string {
	for _, m := range cfg.Models {
		if m.Address == address {
			return m.Slice
		}
	}
	return ""
}

func hasKey(keys []engine.Key, k engine.Key) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func equalKeys(a, b []engine.Key) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
