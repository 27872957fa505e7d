package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/kinds"
)

// widgetEntry is a fake optional kind (in this test only), ranked between
// ConfigMaps and ResourceQuotas.
func widgetEntry() kinds.Entry {
	return kinds.Entry{
		Kind:        kinds.Kind{GroupVersionKind: schema.GroupVersionKind{Group: "example.gpuform.dev", Version: "v1alpha1", Kind: "Widget"}, Namespaced: true, Optional: true},
		Resource:    "widgets",
		Use:         kinds.Managed,
		Rank:        kinds.Builtin().Rank(schema.GroupKind{Kind: "ConfigMap"}) + 1,
		InstallHint: "install the widget operator",
		Access:      kinds.Access{Plan: kinds.VerbsRead, Drift: kinds.VerbsRead, Apply: kinds.VerbList | kinds.VerbCreate | kinds.VerbPatch | kinds.VerbDelete},
	}
}

// widgetDesired is a tenant's namespace, quota, ConfigMap and widget, all
// depending on the namespace only, compiled with reg.
func widgetDesired(reg *kinds.Registry) *engine.Desired {
	d := &engine.Desired{Stack: "s", Registry: reg}
	if reg != nil {
		d.Kinds = reg.Managed()
	}
	ns := engine.Key{Kind: "Namespace", Name: "a"}
	for _, o := range []*unstructured.Unstructured{
		stackObject("v1", "Namespace", "", "a"), stackObject("v1", "ResourceQuota", "a", "gpuform"),
		stackObject("example.gpuform.dev/v1alpha1", "Widget", "a", "w"), stackObject("v1", "ConfigMap", "a", "c"),
	} {
		obj := &engine.Object{Address: "tenant.a", Object: o}
		if o.GetKind() != "Namespace" {
			obj.DependsOn = []engine.Key{ns}
		}
		d.Objects = append(d.Objects, obj)
	}
	return d
}

func planKinds(p *engine.Plan) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, string(c.Action)+" "+c.Key.Kind)
	}
	return out
}

// A kind added to a registry (in this test only) flows through the plan:
// it takes its rank in the apply order and the reverse delete order, the
// apply deletes it in its own rank, a cluster without it gets the entry's
// install hint, and the generated RBAC rules grant it.
func TestFakeKindThroughTheRegistry(t *testing.T) {
	reg, err := kinds.Builtin().With(widgetEntry())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("apply order", func(t *testing.T) {
		p := enginetest.MustDiff(t, widgetDesired(reg), &engine.Live{}, engine.DiffOptions{})
		want := []string{"create Namespace", "create ConfigMap", "create Widget", "create ResourceQuota"}
		if got := planKinds(p); !slices.Equal(got, want) {
			t.Errorf("plan %v, want %v", got, want)
		}
		// The builtin registry does not know widgets: they rank last.
		p = enginetest.MustDiff(t, widgetDesired(nil), &engine.Live{}, engine.DiffOptions{})
		if got := planKinds(p); got[len(got)-1] != "create Widget" {
			t.Errorf("plan without the widget's entry %v, want the widget last", got)
		}
	})
	t.Run("delete order", func(t *testing.T) {
		d := widgetDesired(reg)
		live := &engine.Live{Objects: map[engine.Key]*unstructured.Unstructured{}}
		for _, o := range d.Objects {
			live.Objects[o.Key()] = enginetest.ServerCopy(t, o.Object)
		}
		enginetest.Record(live, d.Stack)
		d.Objects = nil
		p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
		want := []string{"delete ResourceQuota", "delete Widget", "delete ConfigMap", "delete Namespace"}
		if got := planKinds(p); !slices.Equal(got, want) {
			t.Fatalf("plan %v, want %v", got, want)
		}
		r := newRecorder()
		r.delay = 5 * time.Millisecond
		if rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Kinds: reg}); !rep.OK() {
			t.Fatal("apply failed")
		}
		// Rank by rank: each delete began after the one ranked above it ended.
		for i := 1; i < len(p.Changes); i++ {
			above, below := p.Changes[i-1].Key, p.Changes[i].Key
			if r.begun[below].Before(r.finished[above]) {
				t.Errorf("%s was deleted before the delete of %s ended", below, above)
			}
		}
	})
	t.Run("missing CRD", func(t *testing.T) {
		w := widgetEntry().Kind
		_, err := engine.Diff(widgetDesired(reg), &engine.Live{MissingKinds: []engine.Kind{w}}, engine.DiffOptions{})
		var mk *engine.MissingKindError
		if !errors.As(err, &mk) || !strings.Contains(err.Error(), "tenant.a needs Widget (example.gpuform.dev/v1alpha1), which this cluster does not serve: install the widget operator") {
			t.Errorf("want a MissingKindError with the widget's install hint, got %v", err)
		}
		_, err = engine.Diff(widgetDesired(nil), &engine.Live{MissingKinds: []engine.Kind{w}}, engine.DiffOptions{})
		if err == nil || !strings.Contains(err.Error(), kinds.DefaultInstallHint) {
			t.Errorf("without the widget's entry: %v, want the default hint", err)
		}
	})
	t.Run("served only at an older version", func(t *testing.T) {
		w := widgetEntry().Kind
		live := &engine.Live{MissingKinds: []engine.Kind{w}, ServedVersions: map[schema.GroupKind][]string{w.GroupKind(): {"v1alpha0"}}}
		_, err := engine.Diff(widgetDesired(reg), live, engine.DiffOptions{})
		want := "tenant.a needs Widget (example.gpuform.dev/v1alpha1), but this cluster serves Widget only at example.gpuform.dev/v1alpha0: upgrade what serves Widget to a release that serves example.gpuform.dev/v1alpha1"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %s", err, want)
		}
	})
	t.Run("RBAC", func(t *testing.T) {
		for _, role := range kinds.Roles() {
			found := false
			for _, rule := range reg.Rules(role) {
				if slices.Contains(rule.APIGroups, "example.gpuform.dev") && slices.Contains(rule.Resources, "widgets") && slices.Contains(rule.Verbs, "list") {
					found = true
				}
			}
			if !found {
				t.Errorf("the %s rules do not grant list on widgets: %v", role, reg.Rules(role))
			}
		}
	})
}
