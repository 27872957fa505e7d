package stack_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/stack"
)

// A PrometheusRule is drift-checked like every other object: someone
// raises a threshold of the quickstart's pool alerts by hand, drift
// reports a live edit of that PrometheusRule naming the changed field,
// and fix puts the rule back.
func TestDriftSeesAHandEditedAlertRule(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	src := quickstartGit(t)
	src.head = commitA
	if res, err := stack.New(src, stack.Using(cl), stack.Options{}).Apply(ctx, applyOpts()); err != nil || !res.OK() {
		t.Fatalf("apply at %s: %v, %+v", commitA, err, res)
	}
	key := engine.Key{Group: "monitoring.coreos.com", Kind: "PrometheusRule", Namespace: "monitoring", Name: "gpuform-quickstart-pool-a100"}
	res, err := stack.New(src, stack.Using(cl), stack.Options{}).Plan(ctx, stack.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	desired, err := compile.Compile(res.Config)
	if err != nil {
		t.Fatal(err)
	}
	live, err := cl.Refresh(ctx, desired, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj := live.Objects[key]
	if obj == nil {
		t.Fatalf("the applied cluster has no %s", key)
	}
	edited := obj.DeepCopy()
	groups, _, _ := unstructured.NestedSlice(edited.Object, "spec", "groups")
	rule := groups[0].(map[string]any)["rules"].([]any)[0].(map[string]any)
	rule["expr"] = strings.Replace(rule["expr"].(string), "> 90", "> 99", 1)
	if err := unstructured.SetNestedSlice(edited.Object, groups, "spec", "groups"); err != nil {
		t.Fatal(err)
	}
	if err := cl.Apply(ctx, edited, true); err != nil {
		t.Fatal(err)
	}

	st := stack.New(src, stack.Using(openSim(t, dir)), stack.Options{})
	rep, err := st.Drift(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found *drift.Item
	for i, it := range rep.Items {
		if it.Kind == "PrometheusRule" && it.Name == key.Name {
			found = &rep.Items[i]
		}
	}
	if found == nil || found.Class != drift.LiveEdit || found.Address != "pool.a100" || rep.Counts()[drift.LiveEdit] != 1 {
		t.Fatalf("drift = %+v, want one live edit of %s", rep.Items, key)
	}
	fix, err := st.Fix(ctx, applyOpts())
	if err != nil {
		t.Fatal(err)
	}
	if fix.After == nil || !fix.After.InSync() {
		t.Errorf("drift after the fix: %+v", fix.After)
	}
}
