package engine_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// labelledNamespace is a Namespace carrying quickstart's stack labels, with
// the managedFields entries given (none: created by a client that sent no
// field manager).
func labelledNamespace(name string, managers ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": name, "resourceVersion": "7",
		"labels": map[string]any{engine.LabelStack: "quickstart", engine.LabelManagedBy: engine.ManagedByValue},
	}}}
	if len(managers) > 0 {
		u.SetManagedFields(managers)
	}
	return u
}

// TestPruneNeedsMoreThanTheLabel: an object that carries the stack's label
// but that the stack's record does not hold, even with a managedFields
// entry of manager gpuform with operation Apply (which a tenant can forge
// by server-side apply), is a note in the plan, never a delete, and at a
// desired key it is in the way (a conflict, or an adoption with --adopt),
// never silently updated. The lock's namespace is never deleted or taken
// over, even when both marks are forged on it. Before: every object with the
// label was pruned.
func TestPruneNeedsMoreThanTheLabel(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	gone := d.Objects[0] // the configuration no longer has it: a real prune
	for i, o := range d.Objects {
		if o.Key().Kind == "Namespace" && o.Key().Name == "serving" {
			gone = d.Objects[i]
			d.Objects = append(d.Objects[:i:i], d.Objects[i+1:]...)
			break
		}
	}
	kubectl := metav1.ManagedFieldsEntry{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate}
	gpuformUpdate := metav1.ManagedFieldsEntry{Manager: engine.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate}
	gpuformApply := metav1.ManagedFieldsEntry{Manager: engine.FieldManager, Operation: metav1.ManagedFieldsOperationApply}
	foreign := map[string]*unstructured.Unstructured{
		"no-managers":        labelledNamespace("no-managers"),
		"kubectl-created":    labelledNamespace("kubectl-created", kubectl),
		"gpuform-as-updater": labelledNamespace("gpuform-as-updater", gpuformUpdate),
		// Both marks forged (a tenant's server-side apply as manager
		// gpuform), and another tenant's address: not in the record.
		"forged-apply":       labelledNamespace("forged-apply", gpuformApply),
		engine.LockNamespace: labelledNamespace(engine.LockNamespace, kubectl, gpuformApply),
	}
	foreign["forged-apply"].SetAnnotations(map[string]string{engine.AnnotAddress: "tenant.research"})
	for _, u := range foreign {
		live.Objects[engine.KeyOf(u)] = u
	}
	// A desired object that someone else created first, with the label.
	research := engine.Key{Kind: "Namespace", Name: "research"}
	live.Objects[research] = labelledNamespace("research", kubectl)

	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	var deleted []string
	for _, c := range p.Changes {
		if c.Action == engine.ActionDelete {
			deleted = append(deleted, c.Key.String())
		}
	}
	if len(deleted) != 1 || deleted[0] != gone.Key().String() || p.Summary.Destroy != 1 {
		t.Errorf("deletes %v (summary %d), want only %s", deleted, p.Summary.Destroy, gone.Key())
	}
	warnings := strings.Join(engine.WarningTexts(p.Warnings), "\n")
	for name := range foreign {
		if !strings.Contains(warnings, "Namespace "+name+" ") {
			t.Errorf("no warning about Namespace %s, which is left in place:\n%s", name, warnings)
		}
	}
	if !strings.Contains(warnings, "Namespace gpuform-system is the namespace of gpuform's lock") || !strings.Contains(warnings, "Namespace forged-apply carries the label gpuform.dev/stack=quickstart, but is not in the stack's inventory: left in place, not deleted") {
		t.Errorf("warnings do not say why the objects are kept:\n%s", warnings)
	}
	c := changeOf(t, p, research)
	if c.Action != engine.ActionConflict || !strings.Contains(c.Reason, "is not in the stack's inventory") || p.Summary.Conflicts != 1 {
		t.Errorf("a desired namespace someone else created with the label: %s (%q), want a conflict", c.Action, c.Reason)
	}
	if c := changeOf(t, enginetest.MustDiff(t, d, live, engine.DiffOptions{Adopt: true}), research); c.Action != engine.ActionAdopt {
		t.Errorf("with --adopt: %s, want an adoption", c.Action)
	}

	// The lock's namespace, desired and fully forged as the stack's, is in
	// the way even with --adopt.
	lock := labelledNamespace(engine.LockNamespace)
	d.Objects = append(d.Objects, &engine.Object{Address: "tenant.lock", Object: lock})
	for _, adopt := range []bool{false, true} {
		p := enginetest.MustDiff(t, d, live, engine.DiffOptions{Adopt: adopt})
		if c := changeOf(t, p, engine.KeyOf(lock)); c.Action != engine.ActionConflict || !strings.Contains(c.Reason, "no stack may own") {
			t.Errorf("adopt %v: the lock's namespace desired: %s (%q), want a conflict", adopt, c.Action, c.Reason)
		}
	}
}

// changeOf returns p's change of k.
func changeOf(t *testing.T, p *engine.Plan, k engine.Key) *engine.Change {
	t.Helper()
	for _, c := range p.Changes {
		if c.Key == k {
			return c
		}
	}
	t.Fatalf("no change of %s in the plan", k)
	return nil
}
