package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

func TestDiffEmptyClusterCreatesAllInOrder(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	if p.Summary.Add != len(d.Objects) || p.Summary.Change+p.Summary.Destroy != 0 {
		t.Fatalf("summary %+v, want %d to add only", p.Summary, len(d.Objects))
	}
	pos := map[engine.Key]int{}
	for i, c := range p.Changes {
		pos[c.Key] = i
	}
	for _, c := range p.Changes {
		for _, dep := range c.DependsOn {
			if i, ok := pos[dep]; ok && i > pos[c.Key] {
				t.Errorf("%s comes before its dependency %s", c.Key, dep)
			}
		}
	}
	if p.Changes[0].Key.Kind != "Namespace" {
		t.Errorf("first change is %s, want a Namespace", p.Changes[0].Key)
	}
}

func TestDiffAppliedIsNoop(t *testing.T) {
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.Applied(t, d), engine.DiffOptions{})
	if p.HasChanges() || len(p.Changes) != 0 {
		t.Fatalf("plan after apply has changes: %+v", p.Summary)
	}
	if p.Summary.Unchanged != len(d.Objects) {
		t.Errorf("unchanged = %d, want %d", p.Summary.Unchanged, len(d.Objects))
	}
}

func TestDiffFieldChanges(t *testing.T) {
	tests := []struct {
		name   string
		key    engine.Key
		mutate func(u *unstructured.Unstructured)
		want   []engine.FieldDiff // nil: no change expected
	}{
		{
			name: "quota changed by hand",
			key:  engine.Key{Kind: "ResourceQuota", Namespace: "research", Name: "gpuform"},
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "1", "spec", "hard", "requests.nvidia.com/mig-3g.40gb")
			},
			want: []engine.FieldDiff{{Path: `spec.hard["requests.nvidia.com/mig-3g.40gb"]`, Op: engine.FieldChange, Before: "1", After: "2"}},
		},
		{
			name: "equal quantity in another spelling",
			key:  engine.Key{Kind: "ResourceQuota", Namespace: "research", Name: "gpuform"},
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "2000m", "spec", "hard", "requests.nvidia.com/mig-3g.40gb")
			},
		},
		{
			name: "label edited by hand",
			key:  engine.Key{Kind: "Namespace", Name: "research"},
			mutate: func(u *unstructured.Unstructured) {
				l := u.GetLabels()
				l[engine.LabelStack] = "quickstart"
				l["hand"] = "made"
				u.SetLabels(l)
				a := u.GetAnnotations()
				a[engine.AnnotAddress] = "tenant.other"
				u.SetAnnotations(a)
			},
			want: []engine.FieldDiff{{Path: `metadata.annotations["gpuform.dev/address"]`, Op: engine.FieldChange, Before: "tenant.other", After: "tenant.research"}},
		},
		{
			name: "field gpuform set before and no longer sets",
			key:  engine.Key{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "standard"},
			mutate: func(u *unstructured.Unstructured) {
				u.Object["description"] = "old text"
				mf := u.GetManagedFields()
				mf[0].FieldsV1.Raw = []byte(strings.Replace(string(mf[0].FieldsV1.Raw), `{`, `{"f:description":{},`, 1))
				u.SetManagedFields(mf)
			},
			want: []engine.FieldDiff{{Path: "description", Op: engine.FieldRemove, Before: "old text"}},
		},
		{
			name: "fields below one gpuform set before and no longer sets",
			key:  engine.Key{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "standard"},
			mutate: func(u *unstructured.Unstructured) {
				u.Object["extra"] = map[string]any{"a": "1", "b": map[string]any{"c": "2"}}
				mf := u.GetManagedFields()
				mf[0].FieldsV1.Raw = []byte(strings.Replace(string(mf[0].FieldsV1.Raw), `{`, `{"f:extra":{".":{},"f:a":{},"f:b":{"f:c":{}}},`, 1))
				u.SetManagedFields(mf)
			},
			want: []engine.FieldDiff{
				{Path: "extra.a", Op: engine.FieldRemove, Before: "1"},
				{Path: "extra.b.c", Op: engine.FieldRemove, Before: "2"},
			},
		},
		{
			name: "field another manager added is not ours",
			key:  engine.Key{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "standard"},
			mutate: func(u *unstructured.Unstructured) {
				u.Object["description"] = "someone else's"
			},
		},
		{
			name: "server defaults inside lists are ignored",
			key:  engine.Key{Group: "serving.kserve.io", Kind: "InferenceService", Namespace: "serving", Name: "sentiment"},
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Serverless", "status", "deploymentMode")
				_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "predictor", "minReplicas")
				_ = unstructured.SetNestedField(u.Object, "default", "spec", "predictor", "serviceAccountName")
			},
		},
	}
	// The managed fields as maps (what SetManagedFields leaves) and as
	// refresh keeps them (fieldsV1 unparsed).
	forms := []struct {
		name string
		form func(u *unstructured.Unstructured)
	}{
		{"maps", func(*unstructured.Unstructured) {}},
		{"raw", rawManagedFields},
	}
	for _, tt := range tests {
		for _, f := range forms {
			t.Run(tt.name+"/"+f.name, func(t *testing.T) {
				d := enginetest.Quickstart(t)
				live := enginetest.Applied(t, d)
				u, ok := live.Objects[tt.key]
				if !ok {
					t.Fatalf("no %s in the compiled quickstart", tt.key)
				}
				tt.mutate(u)
				f.form(u)
				diffFieldsCase(t, d, live, tt.key, tt.want)
			})
		}
	}
}

// rawManagedFields turns the fieldsV1 of u's managedFields entries into
// *metav1.FieldsV1, as the Kubernetes provider's refresh keeps them.
func rawManagedFields(u *unstructured.Unstructured) {
	for _, e := range u.Object["metadata"].(map[string]any)["managedFields"].([]any) {
		m := e.(map[string]any)
		b, err := json.Marshal(m["fieldsV1"])
		if err != nil {
			panic(err)
		}
		m["fieldsV1"] = &metav1.FieldsV1{Raw: b}
	}
}

// diffFieldsCase checks that diffing d against live updates key with
// exactly the field differences want (nil: no change at all).
func diffFieldsCase(t *testing.T, d *engine.Desired, live *engine.Live, key engine.Key, want []engine.FieldDiff) {
	t.Helper()
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if want == nil {
		if p.HasChanges() {
			t.Fatalf("want no change, got %d: %+v", len(p.Changes), p.Changes[0].Fields)
		}
		return
	}
	if len(p.Changes) != 1 || p.Changes[0].Action != engine.ActionUpdate || p.Changes[0].Key != key {
		t.Fatalf("want one update of %s, got %+v", key, p.Changes)
	}
	got := p.Changes[0].Fields
	if len(got) != len(want) {
		t.Fatalf("fields = %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i].Path != want[i].Path || got[i].Op != want[i].Op || got[i].Before != want[i].Before || got[i].After != want[i].After {
			t.Errorf("field %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDiffDeletesInReverseOrder(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	// Every block removed: no objects and no pools.
	d.Objects, d.Pools = nil, nil
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if p.Summary.Destroy != len(live.Objects) {
		t.Fatalf("destroy = %d, want %d", p.Summary.Destroy, len(live.Objects))
	}
	last := p.Changes[len(p.Changes)-1]
	if last.Key.Kind != "Namespace" {
		t.Errorf("last delete is %s; namespaces must go last", last.Key)
	}
	// The ClusterPolicy is handed back to the GPU Operator's defaults
	// first (an update); then the deletes, models first.
	firstDelete := 0
	for firstDelete < len(p.Changes) && p.Changes[firstDelete].Action != engine.ActionDelete {
		firstDelete++
	}
	if firstDelete != 1 || p.Changes[0].Key.Kind != "ClusterPolicy" {
		t.Errorf("the plan starts with %s then %d more before the first delete; want the ClusterPolicy's hand-back alone", p.Changes[0].Key, firstDelete-1)
	}
	if first := p.Changes[firstDelete]; first.Key.Kind != "InferenceService" {
		t.Errorf("first delete is %s; models must go first", first.Key)
	}
	if last.Address == "" {
		t.Error("delete lost its config address")
	}
}

func TestDiffForeignObjects(t *testing.T) {
	d := enginetest.Quickstart(t)
	key := engine.Key{Kind: "Namespace", Name: "research"}
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "research", "labels": map[string]any{"owner": "ml-team"}, "resourceVersion": "7"},
	}}
	live := enginetest.EmptyLive(t)
	live.Foreign = map[engine.Key]*unstructured.Unstructured{key: foreign}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if p.Summary.Conflicts != 1 {
		t.Fatalf("conflicts = %d, want 1", p.Summary.Conflicts)
	}
	var c *engine.Change
	for _, ch := range p.Changes {
		if ch.Key == key {
			c = ch
		}
	}
	if c == nil || c.Action != engine.ActionConflict || !strings.Contains(c.Reason, "--adopt") {
		t.Fatalf("want a conflict naming --adopt for %s, got %+v", key, c)
	}
	if p.ReadVersions[key] != "7" {
		t.Errorf("read version of the foreign object = %q, want 7", p.ReadVersions[key])
	}
	p = enginetest.MustDiff(t, d, live, engine.DiffOptions{Adopt: true})
	if p.Summary.Conflicts != 0 || p.Summary.Change != 1 {
		t.Fatalf("with --adopt: %+v, want one change and no conflict", p.Summary)
	}
}

func TestDiffNodes(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	node := enginetest.NodeFor(d.Pools[0])
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "cpu-1", "labels": map[string]any{"role": "cpu"}}}}
	live.Nodes = []*unstructured.Unstructured{node, other}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if len(p.Changes) != 1 || p.Changes[0].Key != (engine.Key{Kind: "Node", Name: "node-a100"}) {
		t.Fatalf("want one Node change, got %+v", p.Changes)
	}
	paths := map[string]bool{}
	for _, f := range p.Changes[0].Fields {
		paths[f.Path] = true
	}
	for _, want := range []string{`metadata.labels["gpuform.dev/pool"]`, `metadata.labels["nvidia.com/mig.config"]`} {
		if !paths[want] {
			t.Errorf("node change lacks %s: %+v", want, p.Changes[0].Fields)
		}
	}
	// A second pool selecting the same node is an error.
	d.Pools = append(d.Pools, &engine.NodePool{Address: "pool.other", Pool: "other", Selector: d.Pools[0].Selector})
	if _, err := engine.Diff(d, live, engine.DiffOptions{}); err == nil || !strings.Contains(err.Error(), "pool.other") {
		t.Errorf("want an error naming both pools, got %v", err)
	}
}

func TestDiffMissingKind(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.EmptyLive(t)
	live.MissingKinds = []engine.Kind{engine.KindInferenceService}
	_, err := engine.Diff(d, live, engine.DiffOptions{})
	var mk *engine.MissingKindError
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "model.sentiment") || !strings.Contains(err.Error(), "KServe") {
		t.Fatalf("want a MissingKindError naming model.sentiment and KServe, got %v", err)
	}
}

func TestDiffNeedsTheGPUOperator(t *testing.T) {
	d := enginetest.Quickstart(t)
	_, err := engine.Diff(d, &engine.Live{Source: "test"}, engine.DiffOptions{})
	if err == nil || !strings.Contains(err.Error(), "pool.a100 needs the NVIDIA GPU Operator") || !strings.Contains(err.Error(), `mig_backend = "agent"`) {
		t.Fatalf("want an error naming the pool and the fix, got %v", err)
	}
	live := enginetest.EmptyLive(t)
	_ = unstructured.SetNestedField(live.ClusterPolicies[0].Object, "default-mig-parted-config", "spec", "migManager", "config", "name")
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Summary, `points migManager at ConfigMap "default-mig-parted-config"`) {
		t.Errorf("warnings = %v", p.Warnings)
	} else if addr, _ := p.Warnings[0].Extra.(engine.BlockAddress); addr != "pool.a100" || p.Warnings[0].Severity != hcl.DiagWarning {
		t.Errorf("the warning is a %v about %q, want a warning about pool.a100", p.Warnings[0].Severity, addr)
	}
	found := false
	for _, c := range p.Changes {
		if c.Key.Kind == "ClusterPolicy" && c.Action == engine.ActionUpdate && len(c.Fields) == 1 && c.Fields[0].After == engine.MIGPartedConfig {
			found = true
		}
	}
	if !found {
		t.Error("the plan does not point the ClusterPolicy at gpuform's ConfigMap")
	}
}

func TestDiffRewaitsUnfinishedMIG(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	node := enginetest.NodeFor(d.Pools[0])
	labels := node.GetLabels()
	for k, v := range d.Pools[0].Labels {
		labels[k] = v
	}
	labels[engine.LabelMIGState] = "failed"
	node.SetLabels(labels)
	live.Nodes = []*unstructured.Unstructured{enginetest.ServerCopy(t, node)}
	// Only the pool's labels are gpuform's; the state belongs to mig-manager.
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	if len(p.Changes) != 1 || p.Changes[0].Wait != engine.LabelMIGState {
		t.Fatalf("a node whose MIG state is failed: %+v", p.Changes)
	}
	labels[engine.LabelMIGState] = "success"
	node.SetLabels(labels)
	live.Nodes = []*unstructured.Unstructured{enginetest.ServerCopy(t, node)}
	if p := enginetest.MustDiff(t, d, live, engine.DiffOptions{}); len(p.Changes) != 0 {
		t.Fatalf("a node in its layout with state success: %+v", p.Changes[0].Fields)
	}
}
