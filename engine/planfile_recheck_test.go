package engine_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestRecheckSavedPlan: apply holds every change of a saved plan against
// the cluster read under the lock, whatever the file says: a delete only of
// an object the stack owns (its record holds it with its UID), a
// create only of an object that does not exist, an update only of an owned
// one, an adoption only with --adopt, a Node change only of a Node the
// refresh read. An accepted change is bound to the live object (the
// protect annotation the safety check reads is the live one), and the
// summary the safety limits read is counted from the changes, not taken
// from the file. Before, all of these were applied as the file said.
func TestRecheckSavedPlan(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	forged := labelledNamespace("forged") // the stack's label, no field manager
	live.Objects[engine.KeyOf(forged)] = forged
	research := engine.Key{Kind: "Namespace", Name: "research"}
	if live.Objects[research].GetAnnotations()[engine.AnnotProtect] != "true" {
		t.Fatal("the live research namespace is not protected")
	}
	ns := func(name string) engine.Key { return engine.Key{Kind: "Namespace", Name: name} }
	before := func(k engine.Key, annotations map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": k.Kind, "metadata": map[string]any{"name": k.Name, "annotations": annotations}}
	}
	serving := live.Objects[ns("serving")].Object
	pf := &engine.PlanFile{Stack: "quickstart", Summary: engine.Summary{}, Changes: []engine.SavedChange{
		// Refused:
		{Key: ns("kube-system"), APIVersion: "v1", Action: engine.ActionDelete, Before: before(ns("kube-system"), nil)},
		{Key: ns("forged"), APIVersion: "v1", Action: engine.ActionDelete},
		{Key: ns("serving"), APIVersion: "v1", Action: engine.ActionCreate, After: serving},
		{Key: ns("forged"), APIVersion: "v1", Action: engine.ActionUpdate, After: labelledNamespace("forged").Object},
		{Key: ns("serving"), APIVersion: "v1", Action: engine.ActionAdopt, After: serving, Before: serving},
		{Key: engine.Key{Kind: "Node", Name: "ghost"}, APIVersion: "v1", Action: engine.ActionUpdate, After: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "ghost"}}},
		// Accepted, and bound to the live object:
		{Key: research, APIVersion: "v0", Action: engine.ActionDelete, Before: before(research, map[string]any{engine.AnnotProtect: "false"})},
	}}
	p := pf.Plan()
	if p.Summary.Destroy != 3 || p.Summary.Add != 1 || p.Summary.Change != 3 {
		t.Errorf("summary %+v, want it counted from the changes (3 deletes, 1 create, 3 changes), not the file's zeros", p.Summary)
	}
	err := engine.Recheck(p, live, nil, false)
	var ue *engine.UntrustedPlanError
	if !errors.As(err, &ue) {
		t.Fatalf("Recheck: %v, want an UntrustedPlanError", err)
	}
	want := []string{
		"delete Namespace kube-system: the refresh under the lock did not find it in stack quickstart",
		"delete Namespace forged: it carries the label gpuform.dev/stack=quickstart, but is not in the stack's inventory",
		"create Namespace serving: it exists already",
		"update Namespace forged: it carries the label",
		"adopt Namespace serving: the plan takes it over from its owner; apply a plan that adopts objects with --adopt",
		"update Node ghost: the refresh under the lock did not find it",
	}
	if len(ue.Reasons) != len(want) {
		t.Errorf("reasons:\n%s\nwant %d", strings.Join(ue.Reasons, "\n"), len(want))
	}
	for i, w := range want {
		if i < len(ue.Reasons) && !strings.HasPrefix(ue.Reasons[i], w) {
			t.Errorf("reason %d: %q, want %q...", i, ue.Reasons[i], w)
		}
	}
	if !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("error %q does not say nothing was changed", err)
	}
	last := p.Changes[len(p.Changes)-1]
	if last.Before != live.Objects[research] || last.APIVersion != "v1" {
		t.Errorf("the accepted delete is not bound to the live object: before %v, apiVersion %s", last.Before.Object, last.APIVersion)
	}
	if reasons := engine.Unsafe(p, engine.SafetyOptions{MaxDeletes: 10}); len(reasons) == 0 || !strings.Contains(strings.Join(reasons, " "), "protected tenants: research") {
		t.Errorf("Unsafe after the recheck: %v, want the live protect annotation to refuse the delete", reasons)
	}

	// With --adopt, the adoption of an object the stack does not own passes.
	adopt := &engine.Plan{Stack: "quickstart", Changes: []*engine.Change{{Key: ns("serving"), Action: engine.ActionAdopt, After: &unstructured.Unstructured{Object: serving}}}}
	live.Foreign = map[engine.Key]*unstructured.Unstructured{ns("serving"): live.Objects[ns("serving")]}
	delete(live.Objects, ns("serving"))
	if err := engine.Recheck(adopt, live, nil, true); err != nil {
		t.Errorf("adopt with --adopt: %v", err)
	}
}
