package engine

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/kinds"
)

// Every kind the registry says gpuform reads or patches has a reader (or is
// marked as read otherwise), and every reader is of such a kind or reads
// only the objects its field selector names (Kueue's ConfigMap): a read
// kind added to the registry alone fails here.
func TestEveryReadKindHasAReader(t *testing.T) {
	rs := readers()
	reg := kinds.Builtin()
	for _, e := range reg.Entries() {
		r, ok := rs[e.GroupKind()]
		if e.Use == kinds.Managed && r.FieldSelector != "" {
			continue
		}
		if read := e.Use == kinds.Patched || e.Use == kinds.Read; read != ok {
			t.Errorf("%s (%s): reader %v, want %v", e.GroupKind(), e.Use, ok, read)
		}
	}
	for gk := range rs {
		if _, ok := reg.Lookup(gk); !ok {
			t.Errorf("a reader of %s, which the registry does not have", gk)
		}
	}
}

// ReadKinds gives the registry's versions, in its order, and whether the
// kind may be absent.
func TestReadKinds(t *testing.T) {
	want := []struct {
		kind   Kind
		absent bool
	}{{KindConfigMap, false}, {KindConfigMap, false}, {KindNode, false}, {KindClusterPolicy, true}, {KindGPUCluster, true}, {KindRuntimeClass, true}, {KindResourceSlice, true}}
	got := ReadKinds()
	if len(got) != len(want) {
		t.Fatalf("ReadKinds() = %v, want %d kinds", got, len(want))
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].Absent != w.absent {
			t.Errorf("ReadKinds()[%d] = %v (absent %v), want %v (absent %v)", i, got[i].Kind, got[i].Absent, w.kind, w.absent)
		}
	}
	// The two LISTs of ConfigMaps: Kueue's configuration and Volcano's
	// scheduler's, each by its name.
	for i, name := range []string{capacity.KueueConfigMap, capacity.VolcanoConfigMap} {
		if want := "metadata.name=" + name; got[i].FieldSelector != want {
			t.Errorf("ReadKinds()[%d] selects %q, want %q", i, got[i].FieldSelector, want)
		}
	}
}

// Each reader keeps what the plan reads: every item, or the RuntimeClasses'
// names (an empty, not nil, set when the cluster has none: read, none).
func TestReadersKeep(t *testing.T) {
	obj := func(k Kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(k.GroupVersion().String())
		u.SetKind(k.Kind)
		u.SetName(name)
		return u
	}
	live := &Live{}
	for _, rk := range ReadKinds() {
		rk.Keep(live, []*unstructured.Unstructured{obj(rk.Kind, "a"), obj(rk.Kind, "b")})
	}
	if len(live.Nodes) != 2 || len(live.ClusterPolicies) != 2 {
		t.Errorf("kept %d Nodes and %d ClusterPolicies, want 2 and 2", len(live.Nodes), len(live.ClusterPolicies))
	}
	if !live.RuntimeClasses["a"] || !live.RuntimeClasses["b"] || len(live.RuntimeClasses) != 2 {
		t.Errorf("RuntimeClasses = %v, want a and b", live.RuntimeClasses)
	}
	rs := readers()
	empty := &Live{}
	rs[KindRuntimeClass.GroupKind()].Keep(empty, nil)
	if empty.RuntimeClasses == nil {
		t.Error("no RuntimeClass read: the set is nil, which says they were not read")
	}
	rs[KindResourceSlice.GroupKind()].Keep(empty, nil)
	if !empty.DRA.Served {
		t.Error("no ResourceSlice read: DRA.Served is false, which says the cluster does not serve them")
	}
	if !slices.Equal(live.DRA.GPUClusters, []string{"a", "b"}) {
		t.Errorf("GPUClusters = %v, want a and b", live.DRA.GPUClusters)
	}
}

// The ResourceSlices' reader keeps the devices of NVIDIA's DRA driver by
// node, none of another driver's.
func TestResourceSlicesKeepNVIDIAsDevices(t *testing.T) {
	gv := KindResourceSlice.GroupVersion().String()
	ours := capacity.DRASlice(gv, "n", capacity.DRAGPU("n", "NVIDIA H100 80GB HBM3", 0, nil))
	theirs := capacity.DRASlice(gv, "n", capacity.DRAGPU("n", "NVIDIA H100 80GB HBM3", 1, nil))
	theirs.SetName("other")
	_ = unstructured.SetNestedField(theirs.Object, "gpu.example.com", "spec", "driver")
	_ = unstructured.SetNestedField(theirs.Object, "other", "spec", "pool", "name")
	live := &Live{}
	readers()[KindResourceSlice.GroupKind()].Keep(live, []*unstructured.Unstructured{ours, theirs})
	if devs := live.DRA.Nodes["n"]; len(devs) != 1 || devs[0].Name != "gpu-0" {
		t.Errorf("kept %+v, want gpu-0 of NVIDIA's driver only", live.DRA.Nodes)
	}
}
