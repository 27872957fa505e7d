package stack

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// quotaClaims yields the ResourceQuotas and Kueue ClusterQueues, and
// nothing else, whatever else a kind is called in another group; a
// settled one as its desired object (its slim copy keeps no spec).
func TestQuotaClaims(t *testing.T) {
	live := &engine.Live{Objects: map[engine.Key]*unstructured.Unstructured{}, Settled: map[engine.Key]bool{}, SettledFor: &engine.Desired{}}
	for _, o := range []struct {
		apiVersion, kind, name string
		settled                bool
	}{
		{"v1", "ResourceQuota", "rq", false},
		{"v1", "ResourceQuota", "rq-settled", true},
		{"kueue.x-k8s.io/v1beta2", "ClusterQueue", "cq", false},
		{"kueue.x-k8s.io/v1beta2", "ClusterQueue", "cq-settled", true},
		{"v1", "ConfigMap", "cm", true},
		{"v1", "Namespace", "ns", false},
		{"kueue.x-k8s.io/v1beta2", "LocalQueue", "lq", false},
		{"example.com/v1", "ResourceQuota", "other-rq", false},
		{"example.com/v1", "ClusterQueue", "other-cq", false},
		{"serving.kserve.io/v1beta1", "InferenceService", "isvc", false},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(o.apiVersion)
		u.SetKind(o.kind)
		u.SetName(o.name)
		k := engine.KeyOf(u)
		live.Objects[k] = u
		if o.settled {
			live.Settled[k] = true
			desired := u.DeepCopy()
			desired.SetLabels(map[string]string{"from": "desired"})
			live.SettledFor.Objects = append(live.SettledFor.Objects, &engine.Object{Object: desired})
		}
	}
	var got []string
	for u := range quotaClaims(live) {
		got = append(got, u.GetName()+"/"+u.GetLabels()["from"])
	}
	slices.Sort(got)
	if want := []string{"cq-settled/desired", "cq/", "rq-settled/desired", "rq/"}; !slices.Equal(got, want) {
		t.Errorf("quotaClaims = %v, want %v", got, want)
	}
	// Stopping early stops the walk, on either side.
	for _, stop := range []int{1, 3} {
		n := 0
		for range quotaClaims(live) {
			n++
			if n == stop {
				break
			}
		}
		if n != stop {
			t.Errorf("a walk stopped after %d yielded %d", stop, n)
		}
	}
}
