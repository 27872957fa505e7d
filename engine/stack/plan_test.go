package stack

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// quotaClaims yields the ResourceQuotas and Kueue ClusterQueues, and
// nothing else, whatever else a kind is called in another group.
func TestQuotaClaims(t *testing.T) {
	objs := map[engine.Key]*unstructured.Unstructured{}
	for _, o := range []struct{ apiVersion, kind, name string }{
		{"v1", "ResourceQuota", "rq"},
		{"kueue.x-k8s.io/v1beta2", "ClusterQueue", "cq"},
		{"v1", "ConfigMap", "cm"},
		{"v1", "Namespace", "ns"},
		{"kueue.x-k8s.io/v1beta2", "LocalQueue", "lq"},
		{"example.com/v1", "ResourceQuota", "other-rq"},
		{"example.com/v1", "ClusterQueue", "other-cq"},
		{"serving.kserve.io/v1beta1", "InferenceService", "isvc"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(o.apiVersion)
		u.SetKind(o.kind)
		u.SetName(o.name)
		objs[engine.KeyOf(u)] = u
	}
	var got []string
	for u := range quotaClaims(objs) {
		got = append(got, u.GetName())
	}
	slices.Sort(got)
	if want := []string{"cq", "rq"}; !slices.Equal(got, want) {
		t.Errorf("quotaClaims = %v, want %v", got, want)
	}
	// Stopping early stops the walk.
	n := 0
	for range quotaClaims(objs) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("a walk stopped after one yielded %d", n)
	}
}
