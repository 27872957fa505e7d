package engine_test

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// staleNamespace is a Namespace of the stack at resourceVersion rv, being
// deleted when deleting is set.
func staleNamespace(name, rv string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	u.SetResourceVersion(rv)
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
	}
	return u
}

func staleLive(objs ...*unstructured.Unstructured) *engine.Live {
	l := &engine.Live{Objects: map[engine.Key]*unstructured.Unstructured{}}
	for _, o := range objs {
		l.Objects[engine.KeyOf(o)] = o
	}
	return l
}

// A saved plan is stale when what it read changed, vanished or appeared;
// a namespace already being deleted when planned may finish deleting (its
// resourceVersion moves while the namespace controller empties it).
func TestStaleObjects(t *testing.T) {
	for _, tc := range []struct {
		name        string
		atPlan, now *engine.Live
		want        []string
	}{
		{"unchanged", staleLive(staleNamespace("a", "10", false)), staleLive(staleNamespace("a", "10", false)), nil},
		{"changed", staleLive(staleNamespace("a", "10", false)), staleLive(staleNamespace("a", "11", false)), []string{"Namespace a (changed since the plan)"}},
		{"deleted", staleLive(staleNamespace("a", "10", false)), staleLive(), []string{"Namespace a (deleted since the plan)"}},
		{"deletion begun since", staleLive(staleNamespace("a", "10", false)), staleLive(staleNamespace("a", "11", true)), []string{"Namespace a (changed since the plan)"}},
		{"created", staleLive(), staleLive(staleNamespace("a", "10", false)), []string{"Namespace a (created in the stack since the plan)"}},
		{"terminating, still emptying", staleLive(staleNamespace("a", "10", true)), staleLive(staleNamespace("a", "12", true)), nil},
		{"terminating, then gone", staleLive(staleNamespace("a", "10", true)), staleLive(), nil},
		{"terminating, then recreated", staleLive(staleNamespace("a", "10", true)), staleLive(staleNamespace("a", "20", false)), []string{"Namespace a (changed since the plan)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := engine.Diff(&engine.Desired{Stack: "s"}, tc.atPlan, engine.DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pf, err := engine.NewPlanFile(p, "test", "hash", "ctx", false)
			if err != nil {
				t.Fatal(err)
			}
			if got := pf.StaleObjects(tc.now); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("StaleObjects = %q, want %q", got, tc.want)
			}
		})
	}
}
