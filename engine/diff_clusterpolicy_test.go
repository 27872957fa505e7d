package engine_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// policyChange is the plan's ClusterPolicy update, or nil.
func policyChange(p *engine.Plan) *engine.Change {
	for _, c := range p.Changes {
		if c.Key.Kind == "ClusterPolicy" {
			return c
		}
	}
	return nil
}

// strategyField is the change's diff of spec.mig.strategy (or of spec.mig
// when the live policy has none), or nil.
func strategyField(c *engine.Change) *engine.FieldDiff {
	if c == nil {
		return nil
	}
	for i, f := range c.Fields {
		if f.Path == "spec.mig.strategy" || f.Path == "spec.mig" {
			return &c.Fields[i]
		}
	}
	return nil
}

// TestDiffSetsMIGStrategy checks issue 14's item 1: pools with a MIG layout
// ask for nvidia.com/mig-<profile> resources, which the GPU Operator's
// device plugin advertises only under mig.strategy mixed, so the plan sets
// it on the ClusterPolicy (warning when another value was there), on either
// MIG backend; without a ClusterPolicy the agent backend warns unless the
// pool's nodes already advertise MIG resources.
func TestDiffSetsMIGStrategy(t *testing.T) {
	withStrategy := func(strategy string) *engine.Live {
		live := enginetest.EmptyLive(t)
		if strategy == "" {
			unstructured.RemoveNestedField(live.ClusterPolicies[0].Object, "spec", "mig")
		} else {
			_ = unstructured.SetNestedField(live.ClusterPolicies[0].Object, strategy, "spec", "mig", "strategy")
		}
		return live
	}
	t.Run("single becomes mixed, with a warning at the pool", func(t *testing.T) {
		p := enginetest.MustDiff(t, enginetest.Quickstart(t), withStrategy("single"), engine.DiffOptions{})
		f := strategyField(policyChange(p))
		if f == nil || f.Before != "single" || f.After != engine.MIGStrategyMixed {
			t.Fatalf("ClusterPolicy change %+v, want spec.mig.strategy single -> mixed", policyChange(p))
		}
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Summary, `sets mig.strategy "single"; gpuform will set "mixed"`) {
			t.Fatalf("warnings %v", engine.WarningTexts(p.Warnings))
		}
		if addr, _ := p.Warnings[0].Extra.(engine.BlockAddress); addr != "pool.a100" {
			t.Errorf("the warning is about %q, want pool.a100", addr)
		}
	})
	t.Run("unset becomes mixed", func(t *testing.T) {
		p := enginetest.MustDiff(t, enginetest.Quickstart(t), withStrategy(""), engine.DiffOptions{})
		if f := strategyField(policyChange(p)); f == nil || f.Op != "+" {
			t.Fatalf("ClusterPolicy change %+v, want spec.mig.strategy set", policyChange(p))
		}
		if len(p.Warnings) != 0 {
			t.Errorf("warnings %v, want none", engine.WarningTexts(p.Warnings))
		}
	})
	t.Run("mixed already: no change", func(t *testing.T) {
		if p := enginetest.MustDiff(t, enginetest.Quickstart(t), withStrategy("mixed"), engine.DiffOptions{}); policyChange(p) != nil {
			t.Fatalf("ClusterPolicy change %+v, want none", policyChange(p))
		}
	})
	agent := func(t *testing.T) *engine.Desired {
		d, err := compile.Compile(enginetest.LoadExample(t, "quickstart", `stack = "quickstart"`, `stack = "quickstart"
  mig_backend = "agent"`))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("agent backend sets it too", func(t *testing.T) {
		p := enginetest.MustDiff(t, agent(t), withStrategy("single"), engine.DiffOptions{})
		c := policyChange(p)
		if f := strategyField(c); f == nil || f.After != engine.MIGStrategyMixed {
			t.Fatalf("ClusterPolicy change %+v, want spec.mig.strategy -> mixed", c)
		}
	})
	t.Run("agent backend without a ClusterPolicy", func(t *testing.T) {
		d := agent(t)
		node := enginetest.NodeFor(d.Pools[0])
		p := enginetest.MustDiff(t, d, &engine.Live{Source: "test", Nodes: []*unstructured.Unstructured{node}}, engine.DiffOptions{})
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Summary, "MIG_STRATEGY=mixed") {
			t.Fatalf("warnings %v, want one saying to run the device plugin with MIG_STRATEGY=mixed", engine.WarningTexts(p.Warnings))
		}
		_ = unstructured.SetNestedField(node.Object, "4", "status", "capacity", "nvidia.com/mig-3g.40gb")
		p = enginetest.MustDiff(t, d, &engine.Live{Source: "test", Nodes: []*unstructured.Unstructured{node}}, engine.DiffOptions{})
		if len(p.Warnings) != 0 {
			t.Errorf("nodes advertise nvidia.com/mig-3g.40gb, yet warnings %v", engine.WarningTexts(p.Warnings))
		}
	})
}

// TestDiffHandsTheClusterPolicyBack: a stack whose MIG pools left the
// gpu-operator backend (here: for the agent), and so deletes its mig-parted
// ConfigMap, points the ClusterPolicy's mig-manager back at the GPU
// Operator's default config instead of dropping the field; later plans
// keep what gpuform set (the default, the MIG strategy) rather than drop
// it. Dropping a field makes server-side apply write its emptied parent as
// null, which the ClusterPolicy schema refuses: the switch could not be
// applied.
func TestDiffHandsTheClusterPolicyBack(t *testing.T) {
	live := enginetest.Applied(t, enginetest.Quickstart(t)) // gpu-operator: the mig-parted ConfigMap exists
	d, err := compile.Compile(enginetest.LoadExample(t, "quickstart", `stack = "quickstart"`, `stack = "quickstart"
  mig_backend = "agent"`))
	if err != nil {
		t.Fatal(err)
	}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	c := policyChange(p)
	if c == nil {
		t.Fatal("no ClusterPolicy change; it points at gpuform's mig-parted ConfigMap, which the switch deletes")
	}
	// The GPU Operator's default is no name: v26 then generates the MIG
	// configuration from the hardware (any name, its old default
	// ConfigMap's too, is a custom configuration there), and v25 reads its
	// default ConfigMap.
	if len(c.Fields) != 1 || c.Fields[0].Path != "spec.migManager.config.name" || c.Fields[0].Before != engine.MIGPartedConfig || c.Fields[0].After != "" {
		t.Errorf("ClusterPolicy fields %+v, want only spec.migManager.config.name %s -> \"\"", c.Fields, engine.MIGPartedConfig)
	}

	// The hand-back applied: gpuform now owns the default. A plan of a
	// stack with no MIG pool at all keeps both fields it owns.
	handed := enginetest.ServerCopy(t, c.After)
	live.ClusterPolicies = []*unstructured.Unstructured{handed}
	delete(live.Objects, engine.Key{Kind: "ConfigMap", Namespace: "gpu-operator", Name: engine.MIGPartedConfig})
	d.Pools = nil
	if p := enginetest.MustDiff(t, d, live, engine.DiffOptions{}); policyChange(p) != nil {
		t.Errorf("a plan after the hand-back changes the ClusterPolicy: %+v", policyChange(p).Fields)
	}
}
