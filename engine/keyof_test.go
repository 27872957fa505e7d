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

// TestObjectKeyCached: Key gives the key of the object the Object holds
// now, whether CacheKey kept one or not, and never the kept key of an
// object replaced since; a commit stamp keeps the key.
func TestObjectKeyCached(t *testing.T) {
	obj := func(ns, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": ns, "name": name}}}
	}
	tests := []struct {
		name  string
		steps func(o *Object, d *Desired)
		want  Key
	}{
		{"not cached", func(*Object, *Desired) {}, Key{Kind: "ConfigMap", Namespace: "a", Name: "x"}},
		{"cached", func(o *Object, _ *Desired) { o.CacheKey() }, Key{Kind: "ConfigMap", Namespace: "a", Name: "x"}},
		{"object replaced after caching", func(o *Object, _ *Desired) {
			o.CacheKey()
			o.Object = obj("b", "y")
		}, Key{Kind: "ConfigMap", Namespace: "b", Name: "y"}},
		{"object replaced and cached again", func(o *Object, _ *Desired) {
			o.CacheKey()
			o.Object = obj("b", "y")
			o.CacheKey()
		}, Key{Kind: "ConfigMap", Namespace: "b", Name: "y"}},
		{"stamped after caching", func(o *Object, d *Desired) {
			o.CacheKey()
			d.StampCommit("abc")
		}, Key{Kind: "ConfigMap", Namespace: "a", Name: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Object{Object: obj("a", "x")}
			d := &Desired{Objects: []*Object{o}}
			tt.steps(o, d)
			if got := o.Key(); got != tt.want {
				t.Errorf("Key() = %v, want %v", got, tt.want)
			}
			if got := KeyOf(o.Object); got != tt.want {
				t.Errorf("KeyOf(Object) = %v, want %v", got, tt.want)
			}
			if got := d.index()[tt.want]; got != o {
				t.Errorf("index()[%v] = %v, want the object", tt.want, got)
			}
		})
	}
}
