package engine_test

import (
	"context"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// writeMethods is an engine.Target that records which method wrote each
// object.
type writeMethods struct {
	mu  sync.Mutex
	how map[engine.Key]string
}

func (w *writeMethods) record(k engine.Key, how string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.how[k] = how
	return nil
}

func (w *writeMethods) Apply(_ context.Context, obj *unstructured.Unstructured, _ bool) error {
	return w.record(engine.KeyOf(obj), "apply")
}

// ProbeEnforced finds every policy enforced.
func (w *writeMethods) ProbeEnforced(context.Context, string, []string) error { return nil }

func (w *writeMethods) ApplyWhole(_ context.Context, obj *unstructured.Unstructured) error {
	return w.record(engine.KeyOf(obj), "whole")
}

func (w *writeMethods) ApplyNode(_ context.Context, obj *unstructured.Unstructured, _, _ string) error {
	return w.record(engine.KeyOf(obj), "node")
}

func (w *writeMethods) Delete(_ context.Context, k engine.Key, _ string) error {
	return w.record(k, "delete")
}

func (w *writeMethods) WaitNode(context.Context, string, string) error { return nil }

// TestApplyWritesGuardObjectsWhole checks that apply writes the objects of
// the kinds owned whole with ApplyWhole (which removes other managers'
// fields), for a create, an update and an adoption, and every other
// object with server-side apply alone.
func TestApplyWritesGuardObjectsWhole(t *testing.T) {
	cases := []struct {
		apiVersion, kind, ns string
		action               engine.Action
		want                 string
	}{
		{"v1", "ResourceQuota", "a", engine.ActionUpdate, "whole"},
		{"v1", "ResourceQuota", "b", engine.ActionCreate, "whole"},
		{"rbac.authorization.k8s.io/v1", "RoleBinding", "a", engine.ActionAdopt, "whole"},
		{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", engine.ActionUpdate, "whole"},
		{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", engine.ActionUpdate, "whole"},
		{"kueue.x-k8s.io/v1beta2", "ClusterQueue", "", engine.ActionUpdate, "whole"},
		{"kueue.x-k8s.io/v1beta2", "LocalQueue", "a", engine.ActionUpdate, "whole"},
		{"scheduling.volcano.sh/v1beta1", "Queue", "", engine.ActionUpdate, "whole"},
		{"v1", "ConfigMap", "a", engine.ActionUpdate, "apply"},
		{"scheduling.k8s.io/v1", "PriorityClass", "", engine.ActionUpdate, "apply"},
		{"v1", "Namespace", "", engine.ActionCreate, "apply"},
	}
	p := &engine.Plan{Stack: "s"}
	for _, tc := range cases {
		obj := stackObject(tc.apiVersion, tc.kind, tc.ns, "x-"+tc.ns)
		p.Changes = append(p.Changes, &engine.Change{Key: engine.KeyOf(obj), APIVersion: tc.apiVersion, Action: tc.action, After: obj})
	}
	w := &writeMethods{how: map[engine.Key]string{}}
	if rep := engine.Apply(context.Background(), p, w, engine.ApplyOptions{}); !rep.OK() {
		t.Fatalf("apply failed: %+v", rep.Results)
	}
	for i, tc := range cases {
		if got := w.how[p.Changes[i].Key]; got != tc.want {
			t.Errorf("%s %s written by %q, want %q", tc.action, p.Changes[i].Key, got, tc.want)
		}
	}
}
