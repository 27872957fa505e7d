package drift_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// Commits of the drift tests' history: c1 was applied, c2 is newer.
const (
	c1 = enginetest.C1
	c2 = enginetest.C2
)

func item(t *testing.T, r *drift.Report, class drift.Class, key string) drift.Item {
	t.Helper()
	for _, it := range r.Items {
		if it.Class == class && it.Key().String() == key {
			return it
		}
	}
	t.Fatalf("no %s item for %s in %v", class, key, enginetest.Items(r))
	return drift.Item{}
}

func paths(it drift.Item) string {
	var out []string
	for _, f := range it.Fields {
		out = append(out, f.Path)
	}
	return strings.Join(out, ",")
}

const gpuPath = `spec.hard["requests.nvidia.com/gpu"]`

func TestDriftInSync(t *testing.T) {
	cfg, d := enginetest.Stamped(t, c1)
	r := enginetest.CheckDrift(t, cfg, d, enginetest.DriftLive(t, d), c1)
	if !r.InSync() || len(r.Warnings) != 0 {
		t.Fatalf("applied cluster: items %v, warnings %v", enginetest.Items(r), r.Warnings)
	}
	for _, c := range drift.Classes() {
		if n, ok := r.Counts()[c]; !ok || n != 0 {
			t.Errorf("count of %s = %d, %v", c, n, ok)
		}
	}
	// A newer commit that changes nothing of the objects is in sync too:
	// apply does not restamp unchanged objects.
	cfg2, d2 := enginetest.Stamped(t, c2)
	if r := enginetest.CheckDrift(t, cfg2, d2, enginetest.DriftLive(t, d), c2); !r.InSync() {
		t.Errorf("a no-op commit drifts: %v", enginetest.Items(r))
	}
}

func TestDriftLiveEdit(t *testing.T) {
	cfg, d := enginetest.Stamped(t, c1)
	live := enginetest.DriftLive(t, d)
	_ = unstructured.SetNestedField(enginetest.Quota(live, "a").Object, "5", "spec", "hard", "requests.nvidia.com/gpu")
	r := enginetest.CheckDrift(t, cfg, d, live, c1)
	enginetest.WantItems(t, r, "live-edit ResourceQuota a/gpuform")
	it := r.Items[0]
	if paths(it) != gpuPath || it.Fields[0].Before != "5" || it.Fields[0].After != "2" || it.Action != engine.ActionUpdate || it.AppliedCommit != c1 || it.Address != "tenant.a" {
		t.Errorf("item = %+v", it)
	}
	// Without git (no ref commit, no stamps) drift cannot tell, and says so.
	_, bare := enginetest.DriftConfig(t)
	live = enginetest.DriftLive(t, bare)
	_ = unstructured.SetNestedField(enginetest.Quota(live, "a").Object, "5", "spec", "hard", "requests.nvidia.com/gpu")
	r = enginetest.CheckDrift(t, cfg, bare, live, "")
	enginetest.WantItems(t, r, "unapplied ResourceQuota a/gpuform")
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "not in a git repository") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

// With the configuration at the stamp, each field is attributed: live
// equals what was applied (unapplied) or not (live-edit).
func TestDriftUnappliedAndLiveEditFieldByField(t *testing.T) {
	_, d1 := enginetest.Stamped(t, c1)
	cfg2, d2 := enginetest.Stamped(t, c2, "gpus = 2", "gpus = 3", "admins  = [\"group:b\"]", "admins  = [\"group:b\"]\n  cpu = \"8\"")
	live := enginetest.DriftLive(t, d1)
	_ = unstructured.SetNestedField(enginetest.Quota(live, "b").Object, "4", "spec", "hard", "requests.nvidia.com/gpu")
	r := enginetest.CheckDrift(t, cfg2, d2, live, c2, drift.AppliedConfig{Commit: c2, Desired: d2}, drift.AppliedConfig{Commit: c1, Desired: d1})
	enginetest.WantItems(t, r,
		"live-edit ResourceQuota b/gpuform",
		"unapplied ResourceQuota a/gpuform",
		"unapplied ResourceQuota b/gpuform")
	if it := item(t, r, drift.LiveEdit, "ResourceQuota b/gpuform"); paths(it) != gpuPath || it.Fields[0].Before != "4" || it.Fields[0].After != "1" {
		t.Errorf("hand edit of b: %+v", it.Fields)
	}
	if it := item(t, r, drift.Unapplied, "ResourceQuota b/gpuform"); paths(it) != `spec.hard["requests.cpu"]` || it.AppliedCommit != c1 {
		t.Errorf("unapplied change of b: %+v", it)
	}
	if it := item(t, r, drift.Unapplied, "ResourceQuota a/gpuform"); paths(it) != gpuPath || it.Fields[0].Before != "2" || it.Fields[0].After != "3" {
		t.Errorf("unapplied change of a: %+v", it.Fields)
	}
	// Without the configuration at c1, the stamps alone say unapplied.
	r = enginetest.CheckDrift(t, cfg2, d2, live, c2)
	enginetest.WantItems(t, r, "unapplied ResourceQuota a/gpuform", "unapplied ResourceQuota b/gpuform")
	// A hand edit on an object the newer commit did not change is a live
	// edit even though its stamp is older than the ref.
	cfg3, d3 := enginetest.Stamped(t, c2, "gpus = 2", "gpus = 3")
	live = enginetest.DriftLive(t, d1)
	_ = unstructured.SetNestedField(enginetest.Quota(live, "b").Object, "4", "spec", "hard", "requests.nvidia.com/gpu")
	r = enginetest.CheckDrift(t, cfg3, d3, live, c2, drift.AppliedConfig{Commit: c2, Desired: d3}, drift.AppliedConfig{Commit: c1, Desired: d1})
	enginetest.WantItems(t, r, "live-edit ResourceQuota b/gpuform", "unapplied ResourceQuota a/gpuform")
}

func TestDriftMissing(t *testing.T) {
	rb := engine.Key{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding", Namespace: "a", Name: "gpuform-admins"}
	cfg, d := enginetest.Stamped(t, c1)
	live := enginetest.DriftLive(t, d)
	delete(live.Objects, rb)
	r := enginetest.CheckDrift(t, cfg, d, live, c1)
	enginetest.WantItems(t, r, "missing RoleBinding a/gpuform-admins")
	if it := r.Items[0]; it.Action != engine.ActionCreate || it.AppliedCommit != c1 {
		t.Errorf("item = %+v", it)
	}
	// Against a newer ref: missing when the configuration at the siblings'
	// stamp has it; the objects of a new tenant are unapplied.
	_, d1 := enginetest.Stamped(t, c1)
	cfg2, d2 := enginetest.Stamped(t, c2, `tenant "s" {`, "tenant \"c\" {\n  protect = false\n}\ntenant \"s\" {")
	r = enginetest.CheckDrift(t, cfg2, d2, live, c2, drift.AppliedConfig{Commit: c2, Desired: d2}, drift.AppliedConfig{Commit: c1, Desired: d1})
	enginetest.WantItems(t, r, "unapplied Namespace c", "unapplied ResourceQuota c/gpuform", "missing RoleBinding a/gpuform-admins")
	// Without the configuration at c1 the deleted binding cannot be told
	// from a new one.
	r = enginetest.CheckDrift(t, cfg2, d2, live, c2)
	enginetest.WantItems(t, r, "unapplied RoleBinding a/gpuform-admins", "unapplied Namespace c", "unapplied ResourceQuota c/gpuform")
	// A tenant removed at c1 and added again at c2 is unapplied, not missing.
	_, d0 := enginetest.Stamped(t, c1, `tenant "s" {`, "tenant \"c\" {\n  protect = false\n}\ntenant \"s\" {")
	_, d1b := enginetest.Stamped(t, c2)
	_, d3 := enginetest.Stamped(t, "3333333333333333333333333333333333333333", `tenant "s" {`, "tenant \"c\" {\n  protect = false\n}\ntenant \"s\" {")
	live = enginetest.DriftLive(t, d1b)
	r = enginetest.CheckDrift(t, cfg2, d3, live, "3333333333333333333333333333333333333333",
		drift.AppliedConfig{Commit: c2, Desired: d1b}, drift.AppliedConfig{Commit: c1, Desired: d0})
	enginetest.WantItems(t, r, "unapplied Namespace c", "unapplied ResourceQuota c/gpuform")
}

func TestDriftDeletes(t *testing.T) {
	_, d1 := enginetest.Stamped(t, c1)
	live := enginetest.DriftLive(t, d1)
	// An object with the stack's labels, gpuform's field manager and c1's
	// stamp that the stack's record does not hold: not the stack's, so no
	// drift item, and a warning that it is left in place.
	extra := enginetest.Quota(live, "a").DeepCopy()
	extra.SetNamespace("rogue")
	live.Objects[engine.KeyOf(extra)] = extra
	cfg2, d2 := enginetest.Stamped(t, c2, "tenant \"b\" {\n  quota \"h100\" {\n    gpus = 1\n  }\n  admins  = [\"group:b\"]\n  protect = false\n}", "")
	r := enginetest.CheckDrift(t, cfg2, d2, live, c2, drift.AppliedConfig{Commit: c2, Desired: d2}, drift.AppliedConfig{Commit: c1, Desired: d1})
	enginetest.WantItems(t, r,
		"unapplied Namespace b",
		"unapplied ResourceQuota b/gpuform",
		"unapplied RoleBinding b/gpuform-admins")
	if it := item(t, r, drift.Unapplied, "Namespace b"); it.Action != engine.ActionDelete || it.AppliedCommit != c1 {
		t.Errorf("item = %+v", it)
	}
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "ResourceQuota rogue/gpuform carries the label gpuform.dev/stack=d, but is not in the stack's inventory: left in place, not deleted") {
		t.Errorf("warnings = %s", w)
	}
	// Against c1 itself the extra object is no drift either.
	cfg1, _ := enginetest.DriftConfig(t)
	r = enginetest.CheckDrift(t, cfg1, d1, live, c1)
	enginetest.WantItems(t, r)
}

// A tenant who edits an object in its namespace and writes on it the
// commit stamp of a configuration that has the edit (its own branch, never
// merged) changes nothing: drift takes the applied commit from the stack's
// record, so the edit stays a live edit. Before, the stamp on the object
// made it "unapplied".
func TestDriftStampFromRecord(t *testing.T) {
	cfg, d1 := enginetest.Stamped(t, c1)
	_, branch := enginetest.Stamped(t, c2, "gpus = 2", "gpus = 5")
	live := enginetest.DriftLive(t, d1)
	q := enginetest.Quota(live, "a")
	_ = unstructured.SetNestedField(q.Object, "5", "spec", "hard", "requests.nvidia.com/gpu")
	a := q.GetAnnotations()
	a[engine.AnnotCommit] = c2
	q.SetAnnotations(a)
	r := enginetest.CheckDrift(t, cfg, d1, live, c1, drift.AppliedConfig{Commit: c2, Desired: branch}, drift.AppliedConfig{Commit: c1, Desired: d1})
	enginetest.WantItems(t, r, "live-edit ResourceQuota a/gpuform")
	if it := r.Items[0]; it.AppliedCommit != c1 || paths(it) != gpuPath {
		t.Errorf("item = %+v, want the edit a live edit applied from %s", it, c1)
	}
}

func TestDriftNodes(t *testing.T) {
	cfg, d := enginetest.Stamped(t, c1)
	live := enginetest.DriftLive(t, d)
	// Someone took the H100 node out of the pool, and reset the A100's MIG.
	h := live.Nodes[1]
	labels := h.GetLabels()
	delete(labels, engine.LabelPool)
	h.SetLabels(labels)
	a := live.Nodes[0]
	labels = a.GetLabels()
	labels[engine.LabelMIGConfig] = "all-disabled"
	a.SetLabels(labels)
	r := enginetest.CheckDrift(t, cfg, d, live, c1)
	enginetest.WantItems(t, r, "live-edit Node h100-0", "hardware Node a100-0")
	if it := item(t, r, drift.LiveEdit, "Node h100-0"); paths(it) != `metadata.labels["gpuform.dev/pool"]` || it.Action != engine.ActionUpdate {
		t.Errorf("item = %+v", it)
	}
	if it := item(t, r, drift.Hardware, "Node a100-0"); !strings.Contains(it.Details[0], `"all-disabled", not the pool's layout`) || it.Action != engine.ActionUpdate {
		t.Errorf("item = %+v", it)
	}
	// A changed layout in a newer commit is unapplied, not hardware.
	_, d1 := enginetest.Stamped(t, c1)
	cfg2, d2 := enginetest.Stamped(t, c2, `"1g.10gb" = 7`, `"1g.10gb" = 3, "3g.40gb" = 1`)
	live = enginetest.DriftLive(t, d1)
	r = enginetest.CheckDrift(t, cfg2, d2, live, c2, drift.AppliedConfig{Commit: c2, Desired: d2}, drift.AppliedConfig{Commit: c1, Desired: d1})
	// The new profile is named, 0, in every tenant's quota.
	enginetest.WantItems(t, r, "unapplied ConfigMap gpu-operator/gpuform-mig-parted", "unapplied Node a100-0",
		"unapplied ResourceQuota a/gpuform", "unapplied ResourceQuota b/gpuform", "unapplied ResourceQuota s/gpuform")
}

func TestDriftHardware(t *testing.T) {
	cfg, d := enginetest.Stamped(t, c1)
	live := enginetest.DriftLive(t, d)
	failed := enginetest.PoolNode(t, d, "a100", "a100-failed", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15")
	l := failed.GetLabels()
	l[engine.LabelMIGState] = "failed"
	failed.SetLabels(l)
	wrongModel := enginetest.PoolNode(t, d, "a100", "a100-h100", "NVIDIA-H100-80GB-HBM3", 8, "550.54.15")
	oldDriver := enginetest.PoolNode(t, d, "a100", "a100-old", "NVIDIA-A100-SXM4-80GB", 8, "530.30.02")
	fewer := enginetest.PoolNode(t, d, "a100", "a100-seven", "NVIDIA-A100-SXM4-80GB", 7, "550.54.15")
	instances := enginetest.PoolNode(t, d, "a100", "a100-mig", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15")
	l = instances.GetLabels()
	l["nvidia.com/mig-1g.10gb.count"] = "50"
	instances.SetLabels(l)
	complete := enginetest.PoolNode(t, d, "a100", "a100-mig-ok", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15")
	l = complete.GetLabels()
	l["nvidia.com/mig-1g.10gb.count"] = "56"
	complete.SetLabels(l)
	live.Nodes = append(live.Nodes, failed, wrongModel, oldDriver, fewer, instances, complete)
	r := enginetest.CheckDrift(t, cfg, d, live, c1)
	enginetest.WantItems(t, r,
		"hardware Node a100-failed",
		"hardware Node a100-h100",
		"hardware Node a100-mig",
		"hardware Node a100-old",
		"hardware Node a100-seven")
	for key, want := range map[string]string{
		"Node a100-failed": `MIG state is "failed"`,
		"Node a100-h100":   "has H100-80GB GPUs; pool a100 wants A100-80GB",
		"Node a100-mig":    "MIG instances 1g.10gb x50 where layout sevens on 8 GPUs asks for 1g.10gb x56",
		"Node a100-old":    "runs driver 530.30.02; pool a100 needs >= 535",
		"Node a100-seven":  "has 7 GPUs where the pool's other nodes have 8",
	} {
		if it := item(t, r, drift.Hardware, key); !strings.Contains(strings.Join(it.Details, " "), want) {
			t.Errorf("%s: details %q lack %q", key, it.Details, want)
		}
	}
	if it := item(t, r, drift.Hardware, "Node a100-failed"); it.Action != engine.ActionUpdate || paths(it) != `metadata.labels["nvidia.com/mig.config.state"]` {
		t.Errorf("failed node: %+v", it)
	}
	if it := item(t, r, drift.Hardware, "Node a100-h100"); it.Action != "" || r.Fixable() != true {
		t.Errorf("hardware apply cannot fix has action %q", it.Action)
	}
	// Only hardware: nothing for apply to do.
	live.Nodes = []*unstructured.Unstructured{live.Nodes[0], live.Nodes[1], wrongModel}
	r = enginetest.CheckDrift(t, cfg, d, live, c1)
	if enginetest.WantItems(t, r, "hardware Node a100-h100"); r.Fixable() || r.Plan.Change != 0 {
		t.Errorf("fixable %v, plan %+v", r.Fixable(), r.Plan)
	}
}

// A field another field manager added to an object owned whole is a live
// edit even when the object's stamp is older than the ref: no applied
// configuration explains another manager's field.
func TestDriftForeignFieldIsLiveEdit(t *testing.T) {
	_, d1 := enginetest.Stamped(t, c1)
	cfg2, d2 := enginetest.Stamped(t, c2, "gpus = 2", "gpus = 3")
	live := enginetest.DriftLive(t, d1)
	q := enginetest.Quota(live, "b")
	_ = unstructured.SetNestedField(q.Object, map[string]any{"matchExpressions": []any{map[string]any{"scopeName": "PriorityClass", "operator": "In", "values": []any{"none"}}}}, "spec", "scopeSelector")
	q.SetManagedFields(append(q.GetManagedFields(), metav1.ManagedFieldsEntry{Manager: "intruder", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:scopeSelector":{"f:matchExpressions":{}}}}`)}}))
	r := enginetest.CheckDrift(t, cfg2, d2, live, c2, drift.AppliedConfig{Commit: c2, Desired: d2}, drift.AppliedConfig{Commit: c1, Desired: d1})
	enginetest.WantItems(t, r, "live-edit ResourceQuota b/gpuform", "unapplied ResourceQuota a/gpuform")
	if it := item(t, r, drift.LiveEdit, "ResourceQuota b/gpuform"); paths(it) != "spec.scopeSelector" || it.Fields[0].Op != engine.FieldRemove {
		t.Errorf("the foreign field of b: %+v", it.Fields)
	}
}
