package sim_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/providers/sim"
)

// TestApplyKeepsTheStacksRecord: an apply on the simulated cluster records
// every object it applied in the stack's inventory (gpuform-system), which
// the next refresh reads; an object written afterwards with the stack's
// label and field manager gpuform (a forgery) is not in it, so the next
// plan and apply leave it in place with a warning instead of deleting it,
// even with --max-deletes 0. Removing a model then prunes it by the record.
func TestApplyKeepsTheStacksRecord(t *testing.T) {
	ctx := context.Background()
	_, d, path := setup(t)
	dir := filepath.Dir(path)
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "main.hcl"), strings.Replace(string(src), `simulated = "cluster.sim.hcl"`, "", 1))
	open := func() stack.Cluster {
		c, err := openSim(path)
		if err != nil {
			t.Fatal(err)
		}
		return sim.StackCluster(c)
	}
	opts := stack.ApplyOptions{LockHolder: "test"}
	if res, err := stack.New(stack.Dir(dir), stack.Using(open()), stack.Options{}).Apply(ctx, opts); err != nil || !res.OK() {
		t.Fatalf("apply: %v", err)
	}
	c, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Inventory == nil || len(live.Inventory.Objects) != len(d.Objects) {
		t.Fatalf("record after the apply: %+v, want the %d objects", live.Inventory, len(d.Objects))
	}
	forged := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "forged", "namespace": "research",
			"labels":      map[string]any{engine.LabelStack: d.Stack},
			"annotations": map[string]any{engine.AnnotAddress: "tenant.serving"}},
	}}
	if err := c.Apply(ctx, forged, true); err != nil {
		t.Fatal(err)
	}
	res, err := stack.New(stack.Dir(dir), stack.Using(open()), stack.Options{}).Apply(ctx, opts)
	if err != nil || !res.OK() {
		t.Fatalf("apply with the forgery: %v", err)
	}
	if res.Plan.Summary.Destroy != 0 || !strings.Contains(strings.Join(engine.WarningTexts(res.Plan.Warnings), "\n"), "ConfigMap research/forged carries the label gpuform.dev/stack=quickstart, but is not in the stack's inventory: left in place, not deleted") {
		t.Errorf("plan with the forgery: %+v, warnings %v", res.Plan.Summary, engine.WarningTexts(res.Plan.Warnings))
	}
	// Without the model: the record's InferenceService is pruned, the
	// forgery still left in place.
	text := strings.Replace(string(src), `simulated = "cluster.sim.hcl"`, "", 1)
	start := strings.Index(text, `model "sentiment"`)
	end := start + strings.Index(text[start:], "\n}\n") + 3
	writeFile(t, filepath.Join(dir, "main.hcl"), text[:start]+text[end:])
	opts.Safety.MaxDeletes = 1
	res, err = stack.New(stack.Dir(dir), stack.Using(open()), stack.Options{}).Apply(ctx, opts)
	if err != nil || !res.OK() {
		t.Fatalf("apply without the model: %v", err)
	}
	if res.Plan.Summary.Destroy != 1 || !slices.ContainsFunc(res.Plan.Changes, func(c *engine.Change) bool {
		return c.Action == engine.ActionDelete && c.Key.Kind == "InferenceService" && c.Address == "model.sentiment"
	}) {
		t.Errorf("apply without the model: %+v, want the InferenceService deleted", res.Plan.Summary)
	}
	c, err = openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	if live, err = c.Refresh(ctx, d, engine.RefreshOptions{}); err != nil || live.Objects[engine.KeyOf(forged)] == nil {
		t.Errorf("the forgery after the prune: %v", err)
	}
}
