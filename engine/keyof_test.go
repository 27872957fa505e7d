package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestKeyOfReadsAsTheAccessors: KeyOf, which reads the object in place,
// gives the key unstructured's accessors give, for every shape of
// apiVersion and metadata.
func TestKeyOfReadsAsTheAccessors(t *testing.T) {
	for _, obj := range []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "a"}},
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "namespace": "ns"}},
		{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": "q"}},
		{"apiVersion": "a/b/c", "kind": "Odd", "metadata": map[string]any{"name": "x"}},
		{"apiVersion": "/v1", "kind": "Odd", "metadata": map[string]any{"name": "x"}},
		{"apiVersion": "", "kind": "", "metadata": map[string]any{}},
		{"apiVersion": 3, "kind": true, "metadata": map[string]any{"name": 1, "namespace": []any{}}},
		{"kind": "NoMeta"},
		{},
	} {
		u := &unstructured.Unstructured{Object: obj}
		want := Key{Group: u.GroupVersionKind().Group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
		if got := KeyOf(u); got != want {
			t.Errorf("KeyOf(%v) = %+v, want %+v", obj, got, want)
		}
	}
}
