package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/kinds"
)

// mustJSON decodes a JSON object written in a test.
func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// entry is a managedFields entry as the API server writes it.
func entry(manager, operation, subresource, fields string) any {
	e := map[string]any{"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1"}
	var tree map[string]any
	if err := json.Unmarshal([]byte(fields), &tree); err != nil {
		panic(err)
	}
	e["fieldsV1"] = tree
	if subresource != "" {
		e["subresource"] = subresource
	}
	return e
}

// TestDiffOwnedFindsOtherManagersFields checks, kind by kind, that a field
// another field manager set in an object owned whole is a removal, and
// that what no manager set (the API server's defaults), what desired sets
// too, a status, labels and objects of other kinds are not.
func TestDiffOwnedFindsOtherManagersFields(t *testing.T) {
	const gpuformQuota = `{"f:metadata":{"f:labels":{"f:gpuform.dev/stack":{}}},"f:spec":{"f:hard":{"f:requests.nvidia.com/gpu":{}}}}`
	quota := `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"gpu","namespace":"a","labels":{"gpuform.dev/stack":"s"}},"spec":{"hard":{"requests.nvidia.com/gpu":"2"}}}`
	vap := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"rc","labels":{"gpuform.dev/stack":"s"}},"spec":{"failurePolicy":"Fail","validations":[{"expression":"true"}]}}`
	const gpuformVAP = `{"f:metadata":{"f:labels":{"f:gpuform.dev/stack":{}}},"f:spec":{"f:failurePolicy":{},"f:validations":{}}}`
	binding := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"rc","labels":{"gpuform.dev/stack":"s"}},"spec":{"policyName":"rc","validationActions":["Deny"],"matchResources":{"namespaceSelector":{"matchLabels":{"t":"a"}}}}}`
	const gpuformBinding = `{"f:metadata":{"f:labels":{"f:gpuform.dev/stack":{}}},"f:spec":{"f:policyName":{},"f:validationActions":{},"f:matchResources":{"f:namespaceSelector":{"f:matchLabels":{"f:t":{}}}}}}`
	configMap := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a","labels":{"gpuform.dev/stack":"s"}},"data":{"k":"v"}}`
	cases := []struct {
		name    string
		desired string
		// live adds to desired's content (merged at the top level of each map).
		live    func(m map[string]any)
		entries []any
		want    []string
	}{
		{
			name: "a scope selector another manager added to a quota", desired: quota,
			live: func(m map[string]any) {
				m["spec"].(map[string]any)["scopeSelector"] = map[string]any{"matchExpressions": []any{map[string]any{"scopeName": "PriorityClass", "operator": "In", "values": []any{"none"}}}}
			},
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("intruder", "Apply", "", `{"f:spec":{"f:scopeSelector":{"f:matchExpressions":{}}}}`)},
			want:    []string{"- spec.scopeSelector"},
		},
		{
			name: "the same written with kubectl (an Update)", desired: quota,
			live:    func(m map[string]any) { m["spec"].(map[string]any)["scopes"] = []any{"Terminating"} },
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("kubectl-edit", "Update", "", `{"f:spec":{"f:scopes":{}}}`)},
			want:    []string{"- spec.scopes"},
		},
		{
			name: "an entry under gpuform's name that is not its apply", desired: quota,
			live:    func(m map[string]any) { m["spec"].(map[string]any)["scopes"] = []any{"Terminating"} },
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("gpuform", "Update", "", `{"f:spec":{"f:scopes":{}}}`)},
			want:    []string{"- spec.scopes"},
		},
		{
			name: "a stricter limit added to the quota's hard map", desired: quota,
			live:    func(m map[string]any) { m["spec"].(map[string]any)["hard"].(map[string]any)["pods"] = "0" },
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("intruder", "Apply", "", `{"f:spec":{"f:hard":{"f:pods":{}}}}`)},
			want:    []string{`- spec.hard.pods`},
		},
		{
			name: "the quota controller's status", desired: quota,
			live: func(m map[string]any) {
				m["status"] = map[string]any{"used": map[string]any{"requests.nvidia.com/gpu": "1"}}
			},
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota),
				entry("kube-controller-manager", "Update", "status", `{"f:status":{"f:hard":{".":{},"f:requests.nvidia.com/gpu":{}},"f:used":{}}}`)},
		},
		{
			name: "another manager's label and finalizer", desired: quota,
			live: func(m map[string]any) {
				md := m["metadata"].(map[string]any)
				md["labels"].(map[string]any)["team"] = "x"
				md["finalizers"] = []any{"example.com/keep"}
			},
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("labeller", "Update", "", `{"f:metadata":{"f:labels":{"f:team":{}},"f:finalizers":{".":{},"v:\"example.com/keep\"":{}}}}`)},
		},
		{
			name: "an owner reference another manager added", desired: quota,
			live: func(m map[string]any) {
				m["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u"}}
			},
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("intruder", "Update", "", `{"f:metadata":{"f:ownerReferences":{".":{},"k:{\"uid\":\"u\"}":{}}}}`)},
			want:    []string{"- metadata.ownerReferences"},
		},
		{
			name: "another manager setting what gpuform sets, to the same value", desired: quota,
			live:    func(map[string]any) {},
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("intruder", "Apply", "", `{"f:spec":{"f:hard":{"f:requests.nvidia.com/gpu":{}}}}`)},
		},
		{
			name: "match conditions added to the policy, its defaults no one's", desired: vap,
			live: func(m map[string]any) {
				spec := m["spec"].(map[string]any)
				spec["matchConditions"] = []any{map[string]any{"name": "never", "expression": "false"}}
				spec["auditAnnotations"] = nil
				spec["matchConstraints"] = map[string]any{"matchPolicy": "Equivalent", "namespaceSelector": map[string]any{}, "objectSelector": map[string]any{}}
			},
			entries: []any{entry("gpuform", "Apply", "", gpuformVAP), entry("intruder", "Apply", "", `{"f:spec":{"f:matchConditions":{"k:{\"name\":\"never\"}":{".":{},"f:expression":{},"f:name":{}}}}}`)},
			want:    []string{"- spec.matchConditions"},
		},
		{
			name: "resources excluded in the binding's match", desired: binding,
			live: func(m map[string]any) {
				mr := m["spec"].(map[string]any)["matchResources"].(map[string]any)
				mr["excludeResourceRules"] = []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"*"}, "operations": []any{"*"}, "resources": []any{"pods"}}}
				mr["matchPolicy"] = "Equivalent"
				mr["objectSelector"] = map[string]any{}
			},
			entries: []any{entry("gpuform", "Apply", "", gpuformBinding), entry("intruder", "Apply", "", `{"f:spec":{"f:matchResources":{"f:excludeResourceRules":{}}}}`)},
			want:    []string{"- spec.matchResources.excludeResourceRules"},
		},
		{
			name: "an entry naming a field that is gone", desired: quota,
			live:    func(map[string]any) {},
			entries: []any{entry("gpuform", "Apply", "", gpuformQuota), entry("intruder", "Update", "", `{"f:spec":{"f:scopeSelector":{"f:matchExpressions":{}}}}`)},
		},
		{
			name: "the binding's atomic match taken with force, more inside", desired: binding,
			live: func(m map[string]any) {
				mr := m["spec"].(map[string]any)["matchResources"].(map[string]any)
				mr["excludeResourceRules"] = []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"*"}, "operations": []any{"*"}, "resources": []any{"pods"}}}
			},
			entries: []any{entry("gpuform", "Apply", "", `{"f:metadata":{"f:labels":{"f:gpuform.dev/stack":{}}},"f:spec":{"f:policyName":{},"f:validationActions":{}}}`),
				entry("intruder", "Apply", "", `{"f:spec":{"f:matchResources":{}}}`)},
			want: []string{"~ spec.matchResources"},
		},
		{
			name: "an atomic field shared at gpuform's value", desired: binding,
			live:    func(map[string]any) {},
			entries: []any{entry("gpuform", "Apply", "", gpuformBinding), entry("intruder", "Apply", "", `{"f:spec":{"f:matchResources":{}}}`)},
		},
		{
			name: "a kind not owned whole", desired: configMap,
			live:    func(m map[string]any) { m["data"].(map[string]any)["extra"] = "x" },
			entries: []any{entry("gpuform", "Apply", "", `{"f:data":{"f:k":{}}}`), entry("intruder", "Apply", "", `{"f:data":{"f:extra":{}}}`)},
		},
	}
	reg := kinds.Builtin()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			desired := mustJSON(t, tc.desired)
			live := &unstructured.Unstructured{Object: mustJSON(t, tc.desired)}
			tc.live(live.Object)
			live.Object["metadata"].(map[string]any)["managedFields"] = tc.entries
			if got := fieldLines(engine.DiffOwned(reg, desired, live)); got != strings.Join(tc.want, "\n") {
				t.Errorf("DiffOwned =\n%s\nwant\n%s", got, strings.Join(tc.want, "\n"))
			}
			// The same, with the managed fields as a refresh keeps them
			// (each fieldsV1 as its JSON).
			raw := live.DeepCopy()
			for _, e := range raw.Object["metadata"].(map[string]any)["managedFields"].([]any) {
				m := e.(map[string]any)
				b, _ := json.Marshal(m["fieldsV1"])
				m["fieldsV1"] = string(b)
			}
			if got := fieldLines(engine.DiffOwned(reg, desired, raw)); got != strings.Join(tc.want, "\n") {
				t.Errorf("DiffOwned of fieldsV1 as JSON =\n%s\nwant\n%s", got, strings.Join(tc.want, "\n"))
			}
		})
	}
}

// fieldLines renders field differences one a line, "op path".
func fieldLines(fs []engine.FieldDiff) string {
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = string(f.Op) + " " + f.Path
	}
	return strings.Join(lines, "\n")
}

// TestSettleNeverSettlesAnotherManagersField checks that an object owned
// whole with a field another manager set is not settled (so Diff sees
// it), while objects of other kinds with the same field still settle.
func TestSettleNeverSettlesAnotherManagersField(t *testing.T) {
	_, d := sizeS(t, 0)
	live := enginetest.Applied(t, d)
	s := engine.NewSettler(d)
	reg := d.KindRegistry()
	whole, other := 0, 0
	for _, u := range live.Objects {
		u.Object["intruded"] = map[string]any{"off": true}
		mf := u.GetManagedFields()
		mf = append(mf, metav1.ManagedFieldsEntry{Manager: "intruder", Operation: metav1.ManagedFieldsOperationApply, APIVersion: u.GetAPIVersion(),
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:intruded":{"f:off":{}}}`)}})
		u.SetManagedFields(mf)
		k := engine.KeyOf(u)
		isWhole := reg.OwnedWhole(u.GroupVersionKind().GroupKind())
		_, settled := s.Settle(u.DeepCopy())
		if isWhole && settled {
			t.Errorf("%s, owned whole: settled with another manager's field", k)
		}
		if isWhole {
			whole++
		} else if settled {
			other++
		}
	}
	if whole == 0 || other == 0 {
		t.Fatalf("%d objects owned whole, %d others settled: the stack lacks one or the other", whole, other)
	}
}

// TestTakenPathsAloneDecodesNothing checks that TakenPaths of an object
// whose only managedFields entry is gpuform's apply (most objects a
// refresh settles) costs no allocation: gpuform's field set, kept as JSON
// by a refresh, is decoded only when another manager holds a field.
func TestTakenPathsAloneDecodesNothing(t *testing.T) {
	desired := mustJSON(t, `{"spec":{"predictor":{"minReplicas":1,"nodeSelector":{"gpuform.dev/pool":"a100"}}}}`)
	ours := map[string]any{"manager": engine.FieldManager, "operation": string(metav1.ManagedFieldsOperationApply), "apiVersion": "v1", "fieldsType": "FieldsV1",
		"fieldsV1": `{"f:spec":{"f:predictor":{"f:minReplicas":{},"f:nodeSelector":{}}}}`}
	live := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{ours}}, "spec": desired["spec"]}}
	if got := engine.TakenPaths(live, desired); got != nil {
		t.Fatalf("TakenPaths = %v, want none", got)
	}
	if n := testing.AllocsPerRun(20, func() { engine.TakenPaths(live, desired) }); n != 0 {
		t.Errorf("TakenPaths of an object only gpuform manages allocates %.0f times, want 0", n)
	}
	// Another manager's atomic field: ours is read, and the path found.
	other := entry("kubectl", "Update", "", `{"f:spec":{"f:predictor":{"f:nodeSelector":{}}}}`)
	live.Object["metadata"].(map[string]any)["managedFields"] = []any{ours, other}
	ours["fieldsV1"] = `{"f:spec":{"f:predictor":{"f:minReplicas":{}}}}`
	if got := engine.TakenPaths(live, desired); len(got) != 1 || strings.Join(got[0], ".") != "spec.predictor.nodeSelector" {
		t.Errorf("TakenPaths with kubectl's nodeSelector = %v, want spec.predictor.nodeSelector", got)
	}
}
