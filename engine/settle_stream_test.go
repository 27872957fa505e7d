package engine_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// treeReader is an engine.FieldReader over decoded content, reading each
// object's fields in the order order gives.
type treeReader struct {
	cur    any
	frames []treeFrame
	order  func(m map[string]any) []string
}

type treeFrame struct {
	m    map[string]any
	keys []string
}

func (r *treeReader) Object() bool {
	m, ok := r.cur.(map[string]any)
	if !ok {
		return false
	}
	r.frames = append(r.frames, treeFrame{m: m, keys: r.order(m)})
	return true
}

func (r *treeReader) Next() (string, bool) {
	f := &r.frames[len(r.frames)-1]
	if len(f.keys) == 0 {
		r.frames = r.frames[:len(r.frames)-1]
		return "", false
	}
	k := f.keys[0]
	f.keys = f.keys[1:]
	r.cur = f.m[k]
	return k, true
}

func (r *treeReader) Skip()      {}
func (r *treeReader) Value() any { return r.cur }

// sortedKeys and reversedKeys are two orders a live object's fields come in.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
func reversedKeys(m map[string]any) []string {
	k := sortedKeys(m)
	slices.Reverse(k)
	return k
}

// streamSettle settles u through s as a refresh streams it: apiVersion,
// kind and metadata first, then every other field in order's order.
func streamSettle(s *engine.Settler, c *engine.StreamSettle, u *unstructured.Unstructured, order func(map[string]any) []string) (*unstructured.Unstructured, bool) {
	u = u.DeepCopy()
	head := &unstructured.Unstructured{Object: map[string]any{}}
	for _, f := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := u.Object[f]; ok {
			head.Object[f] = v
		}
	}
	if !s.Stream(c, head) {
		return nil, false
	}
	for _, f := range order(u.Object) {
		switch f {
		case "apiVersion", "kind", "metadata":
			continue
		}
		if !c.Field(f, &treeReader{cur: u.Object[f], order: order}) {
			return nil, false
		}
	}
	return c.Done()
}

// streamEdits are edits of a live object's spec that a stream settle
// meets: each one either changes what Settle finds or does not.
var streamEdits = []struct {
	name string
	edit func(spec map[string]any)
}{
	{"a field dropped", func(spec map[string]any) {
		for _, k := range sortedKeys(spec) {
			delete(spec, k)
			return
		}
	}},
	{"a map made null", func(spec map[string]any) {
		for _, k := range sortedKeys(spec) {
			if _, ok := spec[k].(map[string]any); ok {
				spec[k] = nil
				return
			}
		}
	}},
	{"a server default added", func(spec map[string]any) { spec["defaultedByServer"] = map[string]any{"x": int64(1)} }},
	{"a nested leaf changed", func(spec map[string]any) { editDeep(spec) }},
	{"a string leaf as a quantity", func(spec map[string]any) { quantities(spec) }},
	{"a list element changed", func(spec map[string]any) { editList(spec) }},
	{"a nested map emptied", func(spec map[string]any) {
		for _, k := range sortedKeys(spec) {
			if m, ok := spec[k].(map[string]any); ok {
				clear(m)
				return
			}
		}
	}},
}

// editDeep changes the first leaf found depth first.
func editDeep(m map[string]any) bool {
	for _, k := range sortedKeys(m) {
		switch v := m[k].(type) {
		case map[string]any:
			if editDeep(v) {
				return true
			}
		case string:
			m[k] = v + "-edited"
			return true
		case int64:
			m[k] = v + 1
			return true
		case bool:
			m[k] = !v
			return true
		}
	}
	return false
}

// quantities rewrites every whole-number string "N" as "N000m", the same
// quantity in another form.
func quantities(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			quantities(v)
		case string:
			if len(v) > 0 && len(v) < 4 && v[0] >= '1' && v[0] <= '9' {
				if _, err := fmt.Sscanf(v, "%d", new(int)); err == nil {
					m[k] = v + "000m"
				}
			}
		}
	}
}

// editList changes a field of the first map in a list found.
func editList(m map[string]any) bool {
	for _, k := range sortedKeys(m) {
		switch v := m[k].(type) {
		case map[string]any:
			if editList(v) {
				return true
			}
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok && editDeep(em) {
					return true
				}
			}
		}
	}
	return false
}

// A stream settle settles only what Settle settles, to the same slim
// copy, whatever the order of the fields: over the examples and
// generated size S, applied, perturbed (hand edits, other owners,
// managedFields of another manager, a deletion begun, another commit's
// stamp) and with each of streamEdits; and on an applied cluster it
// settles every object Settle settles, so the refresh never decodes an
// unchanged object whole.
func TestStreamSettleMatchesSettle(t *testing.T) {
	type corpus struct {
		name string
		d    *engine.Desired
		live *engine.Live
	}
	var corpora []corpus
	for _, ex := range []string{"quickstart", "bank", "isolation", "shared"} {
		d, err := compile.Compile(enginetest.LoadExample(t, ex))
		if err != nil {
			t.Fatal(err)
		}
		corpora = append(corpora, corpus{ex, d, enginetest.Applied(t, d)})
	}
	_, applied := sizeS(t, 0)
	corpora = append(corpora, corpus{"size S", applied, enginetest.Applied(t, applied)})
	_, d := enginetest.Stamped(t, enginetest.C1)
	corpora = append(corpora, corpus{"drift", d, enginetest.DriftLive(t, d)})

	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			s := engine.NewSettler(c.d)
			var buf engine.StreamSettle
			check := func(t *testing.T, live *engine.Live, all bool) (streamed, whole int) {
				for _, k := range slices.SortedFunc(maps.Keys(live.Objects), compareKeys) {
					u := live.Objects[k]
					want, wantOK := s.Settle(u.DeepCopy())
					for _, order := range []func(map[string]any) []string{sortedKeys, reversedKeys} {
						got, ok := streamSettle(s, &buf, u, order)
						if ok && !wantOK {
							t.Fatalf("%s: the stream settled an object Settle does not", k)
						}
						if ok && !reflect.DeepEqual(got, want) {
							t.Fatalf("%s: stream settled to\n%v\nSettle to\n%v", k, got.Object, want.Object)
						}
						if all && ok != wantOK {
							t.Errorf("%s: the stream did not settle an unchanged object", k)
						}
						if ok {
							streamed++
						}
					}
					if wantOK {
						whole += 2
					}
				}
				return streamed, whole
			}
			t.Run("applied", func(t *testing.T) {
				if n, _ := check(t, cloneLive(c.live), true); n == 0 {
					t.Fatal("nothing settled: the test proves nothing")
				}
			})
			t.Run("perturbed", func(t *testing.T) {
				p := cloneLive(c.live)
				perturb(t, p)
				check(t, p, false)
			})
			for _, e := range streamEdits {
				t.Run(e.name, func(t *testing.T) {
					p := cloneLive(c.live)
					for _, u := range p.Objects {
						if spec, ok := u.Object["spec"].(map[string]any); ok {
							e.edit(spec)
						}
					}
					check(t, p, false)
				})
			}
		})
	}
}

// A field gpuform applied and no longer sets makes the stream settle give
// way to Settle, which looks the field up in the whole object.
func TestStreamSettleLeavesRemovedFieldsToSettle(t *testing.T) {
	_, d := sizeS(t, 0)
	live := enginetest.Applied(t, d)
	s := engine.NewSettler(d)
	var buf engine.StreamSettle
	tried := 0
	for _, u := range live.Objects {
		if _, ok := u.Object["spec"].(map[string]any); !ok {
			continue
		}
		mf := u.GetManagedFields()
		for i := range mf {
			if mf[i].Manager == engine.FieldManager {
				mf[i].FieldsV1 = &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:noLongerSet":{}}}`)}
			}
		}
		u.SetManagedFields(mf)
		_, wantOK := s.Settle(u.DeepCopy())
		if !wantOK {
			t.Fatalf("%s: Settle does not settle an object whose removed field is gone", engine.KeyOf(u))
		}
		if _, ok := streamSettle(s, &buf, u, sortedKeys); ok {
			t.Errorf("%s: the stream settled with a removed field it cannot look up", engine.KeyOf(u))
		}
		tried++
	}
	if tried == 0 {
		t.Fatal("no object with a spec")
	}
}

func compareKeys(a, b engine.Key) int {
	if a.Less(b) {
		return -1
	}
	if b.Less(a) {
		return 1
	}
	return 0
}
