package kubernetes_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/kubernetes"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// settleServer starts an API server of its own for the settle test, with
// the upstream CRDs of every kind a generated stack has (strict schemas:
// a custom resource comes back defaulted and pruned as on a real cluster,
// its fields in name order), so that the InferenceServices, queues and
// rules settle as they stream from a real schema, not from a stand-in.
// The package's shared server keeps no CRDs: its kinds tests need that.
func settleServer(t *testing.T) *kubeapitest.Server {
	t.Helper()
	s, err := kubeapitest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	cfg, err := s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.ApplyCRDs(kubeapitest.Context(t), cfg, "kueue.yaml", "kserve.yaml", "gpu-operator.yaml", "prometheus-operator.yaml"); err != nil {
		t.Fatal(err)
	}
	// The GPU Operator's ClusterPolicy as its chart renders it, created
	// through the upstream schema: the refreshes read it, and the diff of
	// the policy (gpuform's MIG settings) is part of the plans compared.
	if err := kubeapitest.CreateClusterPolicy(kubeapitest.Context(t), cfg, "cluster-policy"); err != nil {
		t.Fatal(err)
	}
	return s
}

// settleStack compiles a generated configuration with changePercent of
// its tenants changed; every kind it has must be served by s.
func settleStack(t *testing.T, s *kubeapitest.Server, changePercent int) *engine.Desired {
	t.Helper()
	dir := t.TempDir()
	if err := gen.Write(dir, gen.Options{Tenants: 12, Models: 40, Nodes: 4, ChangePercent: changePercent}); err != nil {
		t.Fatal(err)
	}
	d := kubernetes.CompileDir(t, dir)
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: s.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range d.Objects {
		if _, err := kubernetes.MappingOf(c, o.Object.GroupVersionKind()); err != nil {
			t.Fatalf("%s: %v", o.Key(), err)
		}
	}
	d.Kinds = engine.ManagedKinds() // as Prefetch lists
	return d
}

// TestSettledRefreshReadsWhatTheDiffNeeds applies a generated stack, edits
// a share of its objects by hand (changed fields, deleted, relabelled,
// taken over by another manager, an extra object to prune), and refreshes
// it with settling (without a prefetch, and after one whose LISTs finished
// before the refresh) and without: each
// settled refresh holds exactly the whole refresh's objects, the unchanged
// ones as their slim copies (engine.SlimLive) and none of them whole, and
// plans exactly the same. Neither settling nor the diff writes into a
// desired object, nor the diff into a live one (engine.Object: compiled
// objects share equal maps, and so do decoded ones).
func TestSettledRefreshReadsWhatTheDiffNeeds(t *testing.T) {
	ctx := kubeapitest.Context(t)
	srv := settleServer(t)
	applyStack(t, srv, settleStack(t, srv, 0))
	d := settleStack(t, srv, 25)
	compiled := make([]map[string]any, len(d.Objects))
	for i, o := range d.Objects {
		compiled[i] = o.Object.DeepCopy().Object
	}
	defer func() {
		for i, o := range d.Objects {
			if !reflect.DeepEqual(o.Object.Object, compiled[i]) {
				t.Errorf("desired %s changed after compile: %v, was %v", o.Key(), o.Object.Object, compiled[i])
			}
		}
	}()
	whole, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	kubernetes.KeepWhole(whole)
	liveW, err := whole.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(liveW.ClusterPolicies) != 1 {
		t.Fatalf("the refresh read %d ClusterPolicies, want the one the server has", len(liveW.ClusterPolicies))
	}
	want, err := engine.Diff(d, liveW, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Summary.Unchanged == 0 || want.Summary.Change == 0 || want.Summary.Add == 0 || want.Summary.Destroy == 0 {
		t.Fatalf("plan %+v: not every kind of difference", want.Summary)
	}
	for _, tt := range []struct {
		name     string
		prefetch time.Duration // how long the prefetch runs before the refresh; <0: none
	}{{"no prefetch", -1}, {"refresh at once after the prefetch", 0}, {"prefetch finished first", time.Second}} {
		prefetch := tt.prefetch
		t.Run(tt.name, func(t *testing.T) {
			c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig})
			if err != nil {
				t.Fatal(err)
			}
			if prefetch >= 0 {
				c.Prefetch(ctx, d.Stack)
				time.Sleep(prefetch)
			}
			live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(live.ClusterPolicies, liveW.ClusterPolicies) {
				t.Errorf("settled refresh read other ClusterPolicies")
			}
			if !slices.Equal(slices.Sorted(maps.Keys(keyNames(live.Objects))), slices.Sorted(maps.Keys(keyNames(liveW.Objects)))) {
				t.Fatalf("settled refresh read other objects")
			}
			for k, u := range live.Objects {
				w := liveW.Objects[k]
				if live.Settled[k] {
					w = engine.SlimLive(w)
				}
				if !reflect.DeepEqual(u.Object, w.Object) {
					t.Errorf("%s (settled %v): read\n%v\nwant\n%v", k, live.Settled[k], u.Object, w.Object)
				}
			}
			read := map[engine.Key]map[string]any{}
			for k, u := range live.Objects {
				read[k] = u.DeepCopy().Object
			}
			got, err := engine.Diff(d, live, engine.DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, u := range live.Objects {
				if !reflect.DeepEqual(u.Object, read[k]) {
					t.Errorf("the diff changed live %s: %v, was %v", k, u.Object, read[k])
				}
			}
			settledKinds := map[string]int{}
			for k := range live.Settled {
				settledKinds[k.Kind]++
			}
			for _, kind := range []string{"InferenceService", "ClusterQueue", "LocalQueue", "ResourceQuota"} {
				if settledKinds[kind] == 0 {
					t.Errorf("no %s settled: %v", kind, settledKinds)
				}
			}
			if len(live.Settled) != want.Summary.Unchanged {
				t.Errorf("%d objects settled, %d unchanged: an unchanged object is kept whole", len(live.Settled), want.Summary.Unchanged)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("plans differ: %+v, want %+v", got.Summary, want.Summary)
			}
		})
	}
}

// keyNames are the keys of objs as strings.
func keyNames(objs map[engine.Key]*unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for k := range objs {
		out[k.String()+" "+k.Group] = true
	}
	return out
}

// applyStack applies d's objects as gpuform does (namespaces first), then
// edits some by hand: every 7th edited by another manager, every 7th+1
// deleted, every 7th+2 relabelled out of the stack, and adds one object
// of the stack that d does not have.
func applyStack(t *testing.T, srv *kubeapitest.Server, d *engine.Desired) {
	t.Helper()
	ctx := kubeapitest.Context(t)
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	objs := slices.Clone(d.Objects)
	slices.SortStableFunc(objs, func(a, b *engine.Object) int {
		return boolInt(b.Key().Kind == "Namespace") - boolInt(a.Key().Kind == "Namespace")
	})
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.CreateNamespaces(ctx, cfg, "gpu-operator"); err != nil {
		t.Fatal(err)
	}
	extra := objs[0].Object.DeepCopy()
	extra.SetName(extra.GetName() + "-pruned")
	// Applied and recorded in the stack's inventory, as gpuform's apply
	// leaves them.
	inv := &engine.Inventory{Stack: d.Stack, Objects: map[engine.Key]engine.InventoryEntry{}}
	for _, o := range append(objs, &engine.Object{Object: extra}) {
		uid, err := c.ApplyUID(ctx, o.Object, true)
		if err != nil {
			t.Fatalf("apply %s: %v", o.Key(), err)
		}
		inv.Objects[o.Key()] = engine.InventoryEntry{UID: uid, Address: o.Address}
	}
	if err := c.WriteInventory(ctx, inv); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	for i, o := range objs {
		k := o.Key()
		if k.Kind == "Namespace" || i%7 > 2 {
			continue
		}
		m, err := kubernetes.MappingOf(c, o.Object.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		r := dyn.Resource(m.Resource).Namespace(k.Namespace)
		switch i % 7 {
		case 1:
			if err := r.Delete(ctx, k.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		u, err := r.Get(ctx, k.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		switch i % 7 {
		case 0:
			a := u.GetAnnotations()
			a["example.com/by-hand"] = "yes"
			a[engine.AnnotAddress] = "edited." + a[engine.AnnotAddress]
			u.SetAnnotations(a)
		case 2:
			l := u.GetLabels()
			delete(l, engine.LabelStack)
			u.SetLabels(l)
		}
		if _, err := r.Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
