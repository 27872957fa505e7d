package engine_test

import (
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// settle settles every object of live against d, as a refresh does.
func settle(d *engine.Desired, live *engine.Live) {
	s := engine.NewSettler(d)
	s.UseInventory(live.Inventory)
	live.Settled, live.SettledFor = map[engine.Key]bool{}, d
	for k, u := range live.Objects {
		if slim, ok := s.Settle(u); ok {
			live.Objects[k] = slim
			live.Settled[k] = true
		}
	}
}

// cloneLive deep-copies the objects of live (what a second refresh reads).
func cloneLive(live *engine.Live) *engine.Live {
	out := *live
	out.Objects = map[engine.Key]*unstructured.Unstructured{}
	for k, u := range live.Objects {
		out.Objects[k] = u.DeepCopy()
	}
	out.Foreign = maps.Clone(live.Foreign)
	return &out
}

// editLeaf changes the first string leaf under spec (in key order), as a
// hand edit would; it reports whether it found one.
func editLeaf(m map[string]any) bool {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case string:
			m[k] = v + "-edited"
			return true
		case map[string]any:
			if editLeaf(v) {
				return true
			}
		}
	}
	return false
}

// perturb makes live a cluster where a share of the objects was
// hand-edited, deleted, taken by another owner, unmanaged, is being
// deleted, carries another commit's stamp, or is not desired any more.
func perturb(t *testing.T, live *engine.Live) {
	t.Helper()
	keys := slices.SortedFunc(maps.Keys(live.Objects), func(a, b engine.Key) int {
		if a.Less(b) {
			return -1
		}
		if b.Less(a) {
			return 1
		}
		return 0
	})
	for i, k := range keys {
		u := live.Objects[k]
		switch i % 13 {
		case 1:
			if spec, ok := u.Object["spec"].(map[string]any); ok {
				editLeaf(spec)
			}
		case 2:
			delete(live.Objects, k)
		case 3:
			labels := u.GetLabels()
			delete(labels, engine.LabelStack)
			u.SetLabels(labels)
			delete(live.Objects, k)
			live.Foreign[k] = u
		case 4:
			u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}})
		case 5:
			if k.Kind != "Namespace" {
				ts := metav1.Unix(1e9, 0)
				u.SetDeletionTimestamp(&ts)
			}
		case 6:
			a := u.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[engine.AnnotCommit] = enginetest.C1
			a["example.com/by-hand"] = "yes" // not a field gpuform sets
			u.SetAnnotations(a)
		case 7:
			gone := u.DeepCopy()
			gone.SetName(u.GetName() + "-gone")
			live.Objects[engine.KeyOf(gone)] = gone
		}
	}
}

// checkSameResults fails unless d planned, capacity-checked, drift-classified
// and rechecked against live and against live settled give the same results.
func checkSameResults(t *testing.T, cfg *config.Config, d *engine.Desired, live *engine.Live) {
	t.Helper()
	whole, slim := cloneLive(live), cloneLive(live)
	settle(d, slim)
	if len(slim.Settled) == 0 {
		t.Fatal("nothing settled: the test proves nothing")
	}
	for _, adopt := range []bool{false, true} {
		pw := enginetest.MustDiff(t, d, whole, engine.DiffOptions{Adopt: adopt})
		ps := enginetest.MustDiff(t, d, slim, engine.DiffOptions{Adopt: adopt})
		if !reflect.DeepEqual(pw, ps) {
			t.Fatalf("adopt=%v: plans differ:\nwhole %+v\nslim  %+v", adopt, pw.Summary, ps.Summary)
		}
		if pw.Summary.Unchanged != len(slim.Settled) {
			// Every unchanged object settled: none kept whole.
			t.Errorf("%d unchanged, %d settled", pw.Summary.Unchanged, len(slim.Settled))
		}
		if adopt {
			continue
		}
		rw, dw := capacity.CheckFrom(cfg, whole.Nodes, whole.DRA, compile.AppliedQuota(cfg, maps.Values(whole.Objects)), mig.Default())
		rs, ds := capacity.CheckFrom(cfg, slim.Nodes, slim.DRA, compile.AppliedQuota(cfg, comparedObjects(slim)), mig.Default())
		if !reflect.DeepEqual(rw, rs) || fmt.Sprint(dw) != fmt.Sprint(ds) {
			t.Errorf("capacity reports differ:\nwhole %+v %v\nslim  %+v %v", rw, dw, rs, ds)
		}
		opts := drift.Options{Config: cfg, Catalog: mig.Default(), Applied: []drift.AppliedConfig{{Commit: enginetest.C1, Desired: d}}}
		drw := drift.Classify(pw, d, whole, enginetest.C2, opts)
		drs := drift.Classify(ps, d, slim, enginetest.C2, opts)
		if !reflect.DeepEqual(drw, drs) {
			t.Errorf("drift reports differ:\nwhole %+v\nslim  %+v", drw.Items, drs.Items)
		}
		pf := &engine.PlanFile{ReadVersions: map[string]string{}}
		if got, want := pf.StaleObjects(slim), pf.StaleObjects(whole); !slices.Equal(got, want) {
			t.Errorf("stale objects differ: %v, want %v", got, want)
		}
		rpw, rps := enginetest.MustDiff(t, d, cloneLive(whole), engine.DiffOptions{}), enginetest.MustDiff(t, d, cloneLive(whole), engine.DiffOptions{})
		ew, es := engine.Recheck(rpw, whole, nil, false), engine.Recheck(rps, slim, nil, false)
		if fmt.Sprint(ew) != fmt.Sprint(es) || !reflect.DeepEqual(rpw, rps) {
			t.Errorf("rechecks differ: %v, want %v", es, ew)
		}
	}
}

// sizeS is generated size S, with changePercent of its tenants changed.
func sizeS(t *testing.T, changePercent int) (*config.Config, *engine.Desired) {
	t.Helper()
	for _, s := range gen.Sizes() {
		if s.Name != "S" {
			continue
		}
		o := s.Options()
		o.ChangePercent = changePercent
		dir := t.TempDir()
		if err := gen.Write(dir, o); err != nil {
			t.Fatal(err)
		}
		cfg, diags := config.LoadDir(dir, config.Options{})
		if !diags.HasErrors() {
			diags = append(diags, compile.Validate(cfg, mig.Default())...)
		}
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		d, err := compile.Compile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cfg, d
	}
	t.Fatal("no size S")
	return nil, nil
}

// TestSettledLiveGivesSameResults plans, checks capacity, classifies drift
// and rechecks with the unchanged live objects settled (slim) and whole,
// over the examples, the drift stack with nodes and generated size S, each
// with a share of objects changed, hand-edited, deleted, foreign,
// unmanaged, terminating and pruned: every result is the same.
func TestSettledLiveGivesSameResults(t *testing.T) {
	type tc struct {
		name string
		cfg  func(t *testing.T) (*config.Config, *engine.Desired, *engine.Live)
	}
	cases := []tc{
		{"drift", func(t *testing.T) (*config.Config, *engine.Desired, *engine.Live) {
			_, applied := enginetest.Stamped(t, enginetest.C1)
			cfg, d := enginetest.Stamped(t, enginetest.C2, `gpus = 1`, `gpus = 3`)
			return cfg, d, enginetest.DriftLive(t, applied)
		}},
		{"drift, kueue", func(t *testing.T) (*config.Config, *engine.Desired, *engine.Live) {
			kueue := []string{`gpuform { stack = "d" }`, "gpuform {\n  stack     = \"d\"\n  scheduler = \"kueue\"\n}"}
			_, applied := enginetest.Stamped(t, enginetest.C1, kueue...)
			cfg, d := enginetest.Stamped(t, enginetest.C2, append(kueue, `gpus = 1`, `gpus = 3`)...)
			return cfg, d, enginetest.DriftLive(t, applied)
		}},
		{"size S", func(t *testing.T) (*config.Config, *engine.Desired, *engine.Live) {
			_, applied := sizeS(t, 0)
			cfg, d := sizeS(t, 10)
			return cfg, d, enginetest.Applied(t, applied)
		}},
	}
	for _, ex := range []string{"quickstart", "bank", "isolation", "shared"} {
		cases = append(cases, tc{ex, func(t *testing.T) (*config.Config, *engine.Desired, *engine.Live) {
			cfg := enginetest.LoadExample(t, ex)
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return cfg, d, enginetest.Applied(t, d)
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, d, live := c.cfg(t)
			t.Run("applied", func(t *testing.T) { checkSameResults(t, cfg, d, cloneLive(live)) })
			t.Run("perturbed", func(t *testing.T) {
				p := cloneLive(live)
				perturb(t, p)
				checkSameResults(t, cfg, d, p)
			})
		})
	}
}

// comparedObjects yields the objects of live as the diff compared them
// (engine.Live.Compared), as capacity reads them.
func comparedObjects(live *engine.Live) iter.Seq[*unstructured.Unstructured] {
	return func(yield func(*unstructured.Unstructured) bool) {
		for _, u := range live.Compared(nil) {
			if !yield(u) {
				return
			}
		}
	}
}

// TestSettleKeepsUnchangedSlim checks what a settled object keeps: no
// spec (capacity reads a settled quota in its desired object), no fieldsV1, its identity,
// labels, annotations, version and ownership; and that changed objects,
// and objects of another desired state, stay whole.
func TestSettleKeepsUnchangedSlim(t *testing.T) {
	_, d := enginetest.Stamped(t, enginetest.C1)
	live := enginetest.DriftLive(t, d)
	_, d2 := enginetest.Stamped(t, enginetest.C1, `gpus = 1`, `gpus = 3`)
	s := engine.NewSettler(d2)
	quotas := 0
	for k, u := range live.Objects {
		slim, ok := s.Settle(u.DeepCopy())
		changed := len(engine.DiffFields(d2.Objects[slices.IndexFunc(d2.Objects, func(o *engine.Object) bool { return o.Key() == k })].Object.Object, u, engine.FieldManager)) > 0
		if ok == changed {
			t.Fatalf("%s: settled %v, changed %v", k, ok, changed)
		}
		if !ok {
			if !reflect.DeepEqual(slim, u) {
				t.Errorf("%s: a changed object is not kept whole", k)
			}
			continue
		}
		if !reflect.DeepEqual(slim, engine.SlimLive(u)) {
			t.Errorf("%s: settled %v, want SlimLive's %v", k, slim.Object, engine.SlimLive(u).Object)
		}
		_, hasSpec := slim.Object["spec"]
		if k.Kind == "ResourceQuota" || k.Kind == "ClusterQueue" {
			quotas++
		}
		if hasSpec || slim.Object["status"] != nil || slim.Object["data"] != nil || slim.Object["rules"] != nil {
			t.Errorf("%s: settled copy keeps %v", k, slices.Sorted(maps.Keys(slim.Object)))
		}
		for _, mf := range slim.GetManagedFields() {
			if mf.FieldsV1 != nil {
				t.Errorf("%s: settled copy keeps fieldsV1", k)
			}
		}
		if !engine.Owned(slim, d.Stack) || engine.KeyOf(slim) != k || engine.ReadVersion(slim) != engine.ReadVersion(u) ||
			!maps.Equal(slim.GetLabels(), u.GetLabels()) || !maps.Equal(slim.GetAnnotations(), u.GetAnnotations()) || slim.GetAPIVersion() != u.GetAPIVersion() {
			t.Errorf("%s: settled copy lost what readers read: %v", k, slim.Object)
		}
	}
	if quotas == 0 {
		t.Error("no ResourceQuota settled: the test proves nothing about their spec")
	}
	live2 := cloneLive(live)
	settle(d2, live2)
	if _, err := engine.Diff(d, live2, engine.DiffOptions{}); err == nil {
		t.Error("Diff of a live settled against another desired state succeeded")
	}
}

// TestSettledCopyIsItsOwn checks that a settled object shares no map with
// the object it was settled from nor with its desired object: editing
// either after Settle leaves the settled copy as it was, and the copy
// deep-copies (its managedFields keep no fieldsV1, which a refresh keeps
// as its JSON).
func TestSettledCopyIsItsOwn(t *testing.T) {
	edits := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"labels", func(m map[string]any) { m["metadata"].(map[string]any)["labels"].(map[string]any)["team"] = "platform" }},
		{"annotations", func(m map[string]any) {
			m["metadata"].(map[string]any)["annotations"].(map[string]any)["team"] = "platform"
		}},
		{"spec", func(m map[string]any) {
			if spec, ok := m["spec"].(map[string]any); ok {
				for _, v := range spec {
					if vm, ok := v.(map[string]any); ok {
						vm["extra"] = "1"
					}
				}
			}
		}},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			_, d := enginetest.Stamped(t, enginetest.C1)
			live := enginetest.DriftLive(t, d)
			s := engine.NewSettler(d)
			type pair struct{ slim, want *unstructured.Unstructured }
			kept := map[engine.Key]pair{}
			var edited []map[string]any
			for _, o := range d.Objects {
				u, ok := live.Objects[o.Key()]
				if !ok || engine.IsLockNamespace(o.Key()) {
					continue
				}
				u = u.DeepCopy()
				rawManagedFields(u)
				slim, ok := s.Settle(u)
				if !ok {
					t.Fatalf("%s did not settle: %v", o.Key(), engine.DiffOwned(d.KindRegistry(), o.Object.Object, u))
				}
				kept[o.Key()] = pair{slim, slim.DeepCopy()} // DeepCopy panics on a value that is not JSON
				edited = append(edited, u.Object, o.Object.Object)
			}
			// Edited once every object is settled: compile shares maps
			// among desired objects.
			for _, m := range edited {
				if _, ok := m["metadata"].(map[string]any)[e.name]; ok || e.name == "spec" {
					e.edit(m)
				}
			}
			for k, p := range kept {
				if !reflect.DeepEqual(p.slim.Object, p.want.Object) {
					t.Errorf("%s: editing the %s of the live or desired object changed its settled copy:\n%v\nwant\n%v", k, e.name, p.slim.Object, p.want.Object)
				}
			}
			settled := len(kept)
			if settled < 5 {
				t.Fatalf("%d objects settled: too few to prove anything", settled)
			}
		})
	}
}
