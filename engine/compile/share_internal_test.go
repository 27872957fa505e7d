package compile

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// shareLeaves shares only maps of equal content and types, never maps
// holding floats, and maps inside lists too.
func TestShareLeavesOnlyEqual(t *testing.T) {
	objs := []*engine.Object{
		{Object: &unstructured.Unstructured{Object: map[string]any{"a": map[string]any{"n": 1}, "f": map[string]any{"x": 1.5}}}},
		{Object: &unstructured.Unstructured{Object: map[string]any{"a": map[string]any{"n": int64(1)}, "f": map[string]any{"x": 1.5}}}},
		{Object: &unstructured.Unstructured{Object: map[string]any{"a": map[string]any{"n": "1"}, "l": []any{map[string]any{"n": 1}}}}},
	}
	shareLeaves(objs)
	a := func(i int) map[string]any { return objs[i].Object.Object["a"].(map[string]any) }
	same := func(x, y map[string]any) bool { return reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer() }
	if same(a(0), a(1)) || same(a(0), a(2)) || same(a(1), a(2)) {
		t.Error("maps of values of different types are shared")
	}
	if same(objs[0].Object.Object["f"].(map[string]any), objs[1].Object.Object["f"].(map[string]any)) {
		t.Error("maps holding floats are shared")
	}
	if l := objs[2].Object.Object["l"].([]any)[0].(map[string]any); !same(l, a(0)) {
		t.Error("a map in a list is not shared")
	}
}
