package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestInventoryRoundTrip: a record of size L's 47,000 objects is stored in
// shards each well under the API server's 1 MiB object limit and read back
// whole; a newer version with a shard missing (a write cut short) is
// passed over for the last complete one; a shard that does not decode is an
// error, never an empty record.
func TestInventoryRoundTrip(t *testing.T) {
	inv := &engine.Inventory{Stack: "big", Commit: enginetest.C2, Seq: 4, Objects: map[engine.Key]engine.InventoryEntry{}}
	for i := range 47000 {
		k := engine.Key{Group: "serving.kserve.io", Kind: "InferenceService", Namespace: fmt.Sprintf("tenant-%04d", i/10), Name: fmt.Sprintf("model-%d", i)}
		inv.Objects[k] = engine.InventoryEntry{UID: fmt.Sprintf("%08x-1111-2222-3333-%012x", i*7919, i*104729), Commit: []string{enginetest.C1, enginetest.C2}[i%2], Address: fmt.Sprintf(`model.m["%d"]`, i)}
	}
	cms, err := engine.InventoryConfigMaps(inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cms) < 2 {
		t.Errorf("%d shard(s): want the record sharded", len(cms))
	}
	for _, cm := range cms {
		data, _, _ := unstructured.NestedString(cm.Object, "binaryData", "inventory.json.gz")
		if len(data) > 900<<10 || cm.GetNamespace() != engine.LockNamespace || cm.GetLabels()[engine.LabelStack] != "" {
			t.Errorf("shard %s/%s: %d bytes, labels %v", cm.GetNamespace(), cm.GetName(), len(data), cm.GetLabels())
		}
	}
	got, err := engine.ReadInventory("big", cms)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 5 || got.Commit != enginetest.C2 || len(got.Objects) != len(inv.Objects) {
		t.Fatalf("read back seq %d commit %s, %d objects; want 5, %s, %d", got.Seq, got.Commit, len(got.Objects), enginetest.C2, len(inv.Objects))
	}
	for k, e := range inv.Objects {
		if got.Objects[k] != e {
			t.Fatalf("%s: %+v, want %+v", k, got.Objects[k], e)
		}
	}
	// Version 6, cut short after its first shard, beside version 5.
	next, err := engine.InventoryConfigMaps(got)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := engine.ReadInventory("big", append(cms, next[0])); err != nil || got.Seq != 5 {
		t.Errorf("with a torn version 6: %v, %v, want version 5", got, err)
	}
	if stale := engine.StaleInventory("big", 6, append(cms, next...)); len(stale) != len(cms) {
		t.Errorf("stale shards %v, want the %d of version 5", stale, len(cms))
	}
	// Another stack's, or none at all.
	if got, err := engine.ReadInventory("other", cms); err != nil || got != nil {
		t.Errorf("another stack's record: %v, %v, want none", got, err)
	}
	bad := cms[0].DeepCopy()
	_ = unstructured.SetNestedField(bad.Object, "bm90IGd6aXA=", "binaryData", "inventory.json.gz")
	if _, err := engine.ReadInventory("big", []*unstructured.Unstructured{bad}); err == nil {
		t.Error("a shard that does not decode was read")
	}
}

// TestNextInventory: the record after an apply holds what the apply
// created (with the UID the write answered), updated and adopted, drops
// what it deleted, and keeps a failed change's entry as it was; a stack
// without a record gets the desired objects Owned's rule gives it
// (Plan.Migrate), never the leftovers.
func TestNextInventory(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	ns := func(name string) engine.Key { return engine.Key{Kind: "Namespace", Name: name} }
	// A leftover the configuration no longer has.
	leftover := live.Objects[ns("serving")].DeepCopy()
	leftover.SetName("leftover")
	live.Objects[ns("leftover")] = leftover
	live.Inventory = nil
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if p.Summary.Destroy != 0 || len(p.Migrate) != len(d.Objects) {
		t.Fatalf("without a record: %d deletes, %d to record; want 0 and %d", p.Summary.Destroy, len(p.Migrate), len(d.Objects))
	}
	inv := engine.NextInventory(d.Stack, live, p, nil, nil)
	if _, ok := inv.Objects[ns("leftover")]; ok || len(inv.Objects) != len(d.Objects) {
		t.Errorf("first record: %d objects (leftover %v), want the %d desired", len(inv.Objects), ok, len(d.Objects))
	}

	live.Inventory = inv
	created := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": "new", "annotations": map[string]any{engine.AnnotCommit: enginetest.C2},
		"labels": map[string]any{engine.LabelStack: d.Stack}}}}
	rep := &engine.Report{Results: []*engine.Result{
		{Change: &engine.Change{Key: ns("new"), Address: "tenant.new", Action: engine.ActionCreate, After: created}, Outcome: engine.OutcomeApplied},
		{Change: &engine.Change{Key: ns("serving"), Action: engine.ActionDelete}, Outcome: engine.OutcomeApplied},
		{Change: &engine.Change{Key: ns("research"), Action: engine.ActionDelete}, Outcome: engine.OutcomeFailed, Err: errors.New("refused")},
	}}
	next := engine.NextInventory(d.Stack, live, p, rep, map[engine.Key]string{ns("new"): "uid-new"})
	if e := next.Objects[ns("new")]; e.UID != "uid-new" || e.Commit != enginetest.C2 || e.Address != "tenant.new" || next.Commit != enginetest.C2 {
		t.Errorf("created: %+v (record commit %s)", e, next.Commit)
	}
	if _, ok := next.Objects[ns("serving")]; ok {
		t.Error("a deleted object is still recorded")
	}
	if next.Objects[ns("research")] != inv.Objects[ns("research")] {
		t.Error("a failed delete changed its entry")
	}

	// An apply killed after it announced its creates and created one:
	// the next plan finds the created object the stack's, not in the way,
	// and its next record holds its UID; an announced create that never
	// happened is dropped.
	killed := &engine.Plan{Stack: d.Stack, Changes: []*engine.Change{
		{Key: ns("new"), Address: "tenant.new", Action: engine.ActionCreate, After: created},
		{Key: ns("never"), Address: "tenant.never", Action: engine.ActionCreate, After: created},
	}}
	pending := engine.PendingInventory(d.Stack, live, killed)
	if e, ok := pending.Objects[ns("never")]; !ok || e.UID != "" {
		t.Fatalf("pending entry %+v, %v", e, ok)
	}
	made := enginetest.ServerCopy(t, created)
	live.Objects[ns("new")] = made
	live.Inventory = pending
	if !live.Owns(ns("new"), made, d.Stack) {
		t.Error("an object whose create was announced is not the stack's")
	}
	resolved := engine.NextInventory(d.Stack, live, &engine.Plan{Stack: d.Stack}, nil, nil)
	if e := resolved.Objects[ns("new")]; e.UID != string(made.GetUID()) {
		t.Errorf("announced create resolved to %+v, want UID %s", e, made.GetUID())
	}
	if _, ok := resolved.Objects[ns("never")]; ok {
		t.Error("an announced create that never happened is still recorded")
	}
}

// TestRecreatedObjectIsNotTheStacks: an object at a recorded key whose UID
// differs (deleted, then created again by someone else, with the stack's
// label and gpuform's field manager) is not the stack's: at a desired key
// it is in the way, elsewhere it is left in place, never deleted.
func TestRecreatedObjectIsNotTheStacks(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	k := engine.Key{Kind: "Namespace", Name: "serving"}
	live.Objects[k].SetUID("someone-elses")
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if c := changeOf(t, p, k); c.Action != engine.ActionConflict || !strings.Contains(c.Reason, "not in the stack's inventory with its UID") {
		t.Errorf("desired: %s (%q), want a conflict", c.Action, c.Reason)
	}
	var rest []*engine.Object
	for _, o := range d.Objects {
		if o.Key() != k {
			rest = append(rest, o)
		}
	}
	d.Objects = rest
	p = enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if p.Summary.Destroy != 0 || !strings.Contains(strings.Join(engine.WarningTexts(p.Warnings), "\n"), "Namespace serving carries the label gpuform.dev/stack=quickstart, but is not in the stack's inventory") {
		t.Errorf("not desired: %d deletes, warnings %v", p.Summary.Destroy, engine.WarningTexts(p.Warnings))
	}
}
