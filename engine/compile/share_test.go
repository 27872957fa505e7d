package compile_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// Compiled objects share one copy of each recurring small map of scalars
// (the bank's models on one pool share their node selector), and only maps
// of equal content and types.
func TestCompileSharesLeaves(t *testing.T) {
	d, err := compile.Compile(enginetest.LoadExample(t, "bank"))
	if err != nil {
		t.Fatal(err)
	}
	bySelector := map[string][]map[string]any{}
	for _, o := range d.Objects {
		if o.Object.GetKind() != "InferenceService" {
			continue
		}
		sel, ok, _ := unstructured.NestedFieldNoCopy(o.Object.Object, "spec", "predictor", "nodeSelector")
		if !ok {
			t.Fatalf("%s has no node selector", o.Address)
		}
		m := sel.(map[string]any)
		pool := m[engine.LabelPool].(string)
		bySelector[pool] = append(bySelector[pool], m)
	}
	shared := false
	for pool, maps := range bySelector {
		for _, m := range maps[1:] {
			if reflect.ValueOf(m).Pointer() != reflect.ValueOf(maps[0]).Pointer() {
				t.Errorf("two models on pool %s hold two copies of the same node selector", pool)
			}
			shared = true
		}
	}
	if !shared {
		t.Fatal("the bank has no two models on one pool: the test checks nothing")
	}

}
