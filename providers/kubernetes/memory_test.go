package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// planHeapBudget is what a no-op plan of benchmark size S (1,066 objects)
// holds at its fullest: when compile ends, the configuration's model, the
// desired objects and the prefetched objects decoded (decodeList) and not
// yet settled; after the refresh, the unchanged ones settled to slim
// copies (engine.Settler). Measured as the heap in use after a
// collection, which does not depend on the machine's load; a plan's peak
// RSS follows it (the collector lets the heap grow to about twice what is
// held). Lower it when a change holds less.
const planHeapBudget int64 = 22 << 18 // 5.5 MiB

// A no-op plan of a fixed size holds no more than planHeapBudget plus a
// fifth: a regression of more than 20% in what a plan holds fails here,
// before any benchmark runs. The plan goes through the Stack, as the CLI's
// does, against a cluster that answers every LIST with the JSON the API
// server would send (status and another field manager's entry included),
// cut into items while the configuration compiles and settled by the
// refresh, as the Client's prefetched LISTs are. What is held is measured
// when compile, refresh and diff end (the load's end holds the syntax
// tree, dropped just after).
func TestPlanMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	size := writeSizeS(t, dir)
	lists := serverLists(t, CompileDir(t, dir))
	c := &memoryCluster{lists: lists, nodes: gen.Nodes(size.Nodes)}
	var held uint64
	measure := func(phase string, _ time.Duration) {
		if phase != "load" { // the syntax tree is still there, by design
			held = max(held, heapInUse())
		}
	}
	before := heapInUse()
	s := stack.New(stack.Dir(dir), stack.Using(c), stack.Options{Phase: measure})
	res, err := s.Plan(context.Background(), stack.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.Summary.Conflicts > 0 {
		t.Fatalf("the plan has %d conflicts", res.Plan.Summary.Conflicts)
	}
	if n := len(c.live.Settled); n != res.Plan.Summary.Unchanged {
		t.Errorf("%d objects settled, %d unchanged: unchanged objects are held whole", n, res.Plan.Summary.Unchanged)
	}
	runtime.KeepAlive(lists)
	used := int64(held) - int64(before)
	t.Logf("held at the fullest: %.1f MiB (budget %.1f MiB)", float64(used)/(1<<20), float64(planHeapBudget)/(1<<20))
	if limit := planHeapBudget * 6 / 5; used > limit {
		t.Errorf("a no-op plan of size S holds %.1f MiB, over its budget of %.1f MiB by more than 20%%: find what it keeps (GPUFORM_MEMPROFILE, docs/performance.md)",
			float64(used)/(1<<20), float64(planHeapBudget)/(1<<20))
	}
	if used < planHeapBudget/2 {
		t.Errorf("a no-op plan of size S holds %.1f MiB, under half its budget of %.1f MiB: lower planHeapBudget to keep the gain",
			float64(used)/(1<<20), float64(planHeapBudget)/(1<<20))
	}
}

// heapInUse is the heap's live bytes after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// writeSizeS writes the generated size S into dir and returns it.
func writeSizeS(tb testing.TB, dir string) gen.Size {
	tb.Helper()
	for _, s := range gen.Sizes() {
		if s.Name == "S" {
			if err := gen.Write(dir, s.Options()); err != nil {
				tb.Fatal(err)
			}
			return s
		}
	}
	tb.Fatal("no size S")
	return gen.Size{}
}

// serverLists compiles the configuration in dir and returns, per kind, the
// JSON LIST response of its objects as the API server stores them after
// gpuform applied them.
func serverLists(t testing.TB, d *engine.Desired) map[schema.GroupVersionKind][]byte {
	t.Helper()
	items := map[schema.GroupVersionKind][]any{}
	for _, o := range d.Objects {
		gvk := o.Object.GroupVersionKind()
		items[gvk] = append(items[gvk], serverObject(t, o.Object))
	}
	out := map[schema.GroupVersionKind][]byte{}
	for gvk, list := range items {
		b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": list})
		if err != nil {
			t.Fatal(err)
		}
		out[gvk] = b
	}
	return out
}

// serverObject is obj as the API server returns it: with a uid, a
// resourceVersion, a status, gpuform's managedFields entry (every field it
// set) and another manager's.
func serverObject(t testing.TB, obj *unstructured.Unstructured) map[string]any {
	u := obj.DeepCopy()
	u.SetUID("6f1c2b1e-0000-4000-8000-000000000000")
	u.SetResourceVersion("123456")
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	raw, err := json.Marshal(fieldsOf(obj.Object))
	if err != nil {
		t.Fatal(err)
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: engine.FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: u.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: u.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{".":{}}}`)}, Subresource: "status"},
	})
	return u.Object
}

// fieldsOf is the managedFields tree of every field of m but apiVersion
// and kind.
func fieldsOf(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k == "apiVersion" || k == "kind" {
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			out["f:"+k] = fieldsOf(sub)
		} else {
			out["f:"+k] = map[string]any{}
		}
	}
	return out
}

// memoryCluster answers a Stack's Refresh from LIST responses, read as
// the Client reads them: decoded in Prefetch, and settled by Refresh
// against the desired objects (keepWhole: settling none).
type memoryCluster struct {
	stack.Cluster
	lists     map[schema.GroupVersionKind][]byte
	nodes     []gen.Node
	keepWhole bool
	live      *engine.Live
	err       error
}

// Prefetch reads the lists, as the Client's Prefetch starts them: while
// the configuration compiles.
func (c *memoryCluster) Prefetch(context.Context, string) {
	c.live, c.err = c.decode()
}

func (c *memoryCluster) Refresh(ctx context.Context, d *engine.Desired, _ engine.RefreshOptions) (*engine.Live, error) {
	if c.live == nil && c.err == nil {
		return nil, fmt.Errorf("refresh without a prefetch")
	}
	if c.err != nil {
		return nil, c.err
	}
	if !c.keepWhole {
		settleAll(c.live, engine.NewSettler(d))
	}
	if len(c.live.Settled) > 0 {
		c.live.SettledFor = d
	}
	return c.live, nil
}

func (c *memoryCluster) decode() (*engine.Live, error) {
	live := &engine.Live{Objects: map[engine.Key]*unstructured.Unstructured{}, Settled: map[engine.Key]bool{}, Foreign: map[engine.Key]*unstructured.Unstructured{}, Source: "memory test"}
	for gvk, list := range c.lists {
		items, _, err := decodeList(list, gvk, true)
		if err != nil {
			return nil, err
		}
		for _, u := range items {
			live.Objects[engine.KeyOf(u)] = u
		}
	}
	for _, n := range c.nodes {
		capacity := map[string]any{}
		for k, v := range n.Capacity {
			capacity[k] = v
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "status": map[string]any{"capacity": capacity, "allocatable": capacity}}}
		u.SetName(n.Name)
		u.SetLabels(n.Labels)
		live.Nodes = append(live.Nodes, u)
	}
	live.ClusterPolicies = []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": map[string]any{"name": "cluster-policy"},
		"spec": map[string]any{
			"migManager": map[string]any{"config": map[string]any{"name": engine.MIGPartedConfig}},
			"mig":        map[string]any{"strategy": engine.MIGStrategyMixed},
		},
	}}}
	return live, nil
}

func (c *memoryCluster) GPUPods(context.Context, []string) (map[string][]string, error) {
	return nil, nil
}

func (c *memoryCluster) Context() string { return "memory-test" }
