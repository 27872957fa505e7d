package engine_test

import (
	"fmt"
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
		rw, dw := capacity.CheckFrom(cfg, whole.Nodes, maps.Values(whole.Objects), mig.Default())
		rs, ds := capacity.CheckFrom(cfg, slim.Nodes, maps.Values(slim.Objects), mig.Default())
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

// TestSettleKeepsUnchangedSlim checks what a settled object keeps: no
// spec (but for the kinds capacity reads), no fieldsV1, its identity,
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
		keepsSpec := k.Kind == "ResourceQuota" || k.Kind == "ClusterQueue"
		if keepsSpec {
			quotas++
		}
		if hasSpec != keepsSpec || slim.Object["status"] != nil || slim.Object["data"] != nil || slim.Object["rules"] != nil {
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

// TestSettleSharesDesiredMetadataMaps checks that a settled object keeps
// its desired object's labels and annotations maps, not a second copy,
// where its own hold the same strings, and its own where they do not (a
// label another manager added, another commit's stamp): what readers see
// is the live object's either way.
func TestSettleSharesDesiredMetadataMaps(t *testing.T) {
	_, d := enginetest.Stamped(t, enginetest.C1)
	live := enginetest.DriftLive(t, d)
	same := func(a any, b any) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	tests := []struct {
		name                string
		edit                func(u *unstructured.Unstructured)
		labels, annotations bool
	}{
		{"as desired", func(*unstructured.Unstructured) {}, true, true},
		{"a label another manager added", func(u *unstructured.Unstructured) {
			l := u.GetLabels()
			l["team"] = "platform"
			u.SetLabels(l)
		}, false, true},
		{"another commit's stamp", func(u *unstructured.Unstructured) {
			a := u.GetAnnotations()
			a[engine.AnnotCommit] = "0123456789abcdef0123456789abcdef01234567"
			u.SetAnnotations(a)
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := engine.NewSettler(d)
			settled := 0
			for _, o := range d.Objects {
				u, ok := live.Objects[o.Key()]
				if !ok || engine.IsLockNamespace(o.Key()) {
					continue
				}
				u = u.DeepCopy()
				tt.edit(u)
				labels, annotations := u.GetLabels(), u.GetAnnotations()
				slim, ok := s.Settle(u)
				if !ok {
					t.Fatalf("%s did not settle", o.Key())
				}
				settled++
				md, wmd := slim.Object["metadata"].(map[string]any), o.Object.Object["metadata"].(map[string]any)
				if got := same(md["labels"], wmd["labels"]); got != tt.labels {
					t.Errorf("%s: labels map shared with the desired object: %v, want %v", o.Key(), got, tt.labels)
				}
				if got := same(md["annotations"], wmd["annotations"]); got != tt.annotations {
					t.Errorf("%s: annotations map shared with the desired object: %v, want %v", o.Key(), got, tt.annotations)
				}
				if !maps.Equal(slim.GetLabels(), labels) || !maps.Equal(slim.GetAnnotations(), annotations) {
					t.Errorf("%s: settled labels %v annotations %v, live had %v and %v", o.Key(), slim.GetLabels(), slim.GetAnnotations(), labels, annotations)
				}
			}
			if settled < 5 {
				t.Fatalf("%d objects settled: too few to prove anything", settled)
			}
		})
	}
}
