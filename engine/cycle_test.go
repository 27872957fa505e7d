package engine_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
)

// writeCounter is an engine.Target that counts every call and writes
// nothing.
type writeCounter struct{ writes atomic.Int64 }

func (w *writeCounter) Apply(context.Context, *unstructured.Unstructured, bool) error {
	w.writes.Add(1)
	return nil
}

func (w *writeCounter) ApplyWhole(context.Context, *unstructured.Unstructured) error {
	w.writes.Add(1)
	return nil
}

func (w *writeCounter) ApplyNode(context.Context, *unstructured.Unstructured, string, string) error {
	w.writes.Add(1)
	return nil
}

func (w *writeCounter) Delete(context.Context, engine.Key, string) error {
	w.writes.Add(1)
	return nil
}

func (w *writeCounter) WaitNode(context.Context, string, string) error {
	w.writes.Add(1)
	return nil
}

func (w *writeCounter) ProbeEnforced(context.Context, string, []string) error { return nil }

// stackObject is an object of stack "s" as compile makes it.
func stackObject(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	meta := map[string]any{
		"name":        name,
		"labels":      map[string]any{engine.LabelManagedBy: engine.ManagedByValue, engine.LabelStack: "s"},
		"annotations": map[string]any{engine.AnnotAddress: "tenant.a"},
	}
	if ns != "" {
		meta["namespace"] = ns
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}}
}

// The keys of cyclicPlan's objects that cycles use.
var (
	nsA    = engine.Key{Kind: "Namespace", Name: "a"}
	cmA    = engine.Key{Kind: "ConfigMap", Namespace: "a", Name: "c"}
	quotaA = engine.Key{Kind: "ResourceQuota", Namespace: "a", Name: "gpuform"}
)

// cycle is a dependency cycle among cyclicPlan's objects.
type cycle struct {
	name string
	// deps maps a key to what it depends on.
	deps map[engine.Key][]engine.Key
	// cycle lists the objects the error must name.
	cycle []engine.Key
}

// cycles are plans whose changes depend on each other; each plan has an
// independent change (a PriorityClass) and a delete that must not be made
// either.
func cycles() []cycle {
	return []cycle{
		{"self-loop", map[engine.Key][]engine.Key{nsA: {nsA}}, []engine.Key{nsA}},
		{"2-cycle", map[engine.Key][]engine.Key{nsA: {cmA}, cmA: {nsA}}, []engine.Key{nsA, cmA}},
		{"3-cycle", map[engine.Key][]engine.Key{nsA: {quotaA}, cmA: {nsA}, quotaA: {cmA}}, []engine.Key{nsA, cmA, quotaA}},
	}
}

// cyclicPlan is a plan that creates a namespace, a ConfigMap, a quota and a
// priority class with deps, and deletes a ConfigMap.
func cyclicPlan(deps map[engine.Key][]engine.Key) *engine.Plan {
	p := &engine.Plan{Stack: "s", Source: "test", ReadVersions: map[engine.Key]string{}}
	for _, o := range []*unstructured.Unstructured{
		stackObject("v1", "Namespace", "", "a"), stackObject("v1", "ConfigMap", "a", "c"),
		stackObject("v1", "ResourceQuota", "a", "gpuform"), stackObject("scheduling.k8s.io/v1", "PriorityClass", "", "free"),
	} {
		k := engine.KeyOf(o)
		p.Changes = append(p.Changes, &engine.Change{Address: "tenant.a", Key: k, APIVersion: o.GetAPIVersion(), Action: engine.ActionCreate, After: o, DependsOn: deps[k]})
		p.Summary.Add++
	}
	old := stackObject("v1", "ConfigMap", "a", "old")
	p.Changes = append(p.Changes, &engine.Change{Address: "tenant.a", Key: engine.KeyOf(old), APIVersion: "v1", Action: engine.ActionDelete, Before: old})
	p.Summary.Destroy++
	return p
}

// checkCycleError checks that err is a DependencyCycleError naming every
// object of the cycle.
func checkCycleError(t *testing.T, err error, cycle []engine.Key) {
	t.Helper()
	var ce *engine.DependencyCycleError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a DependencyCycleError", err)
	}
	if len(ce.Cycle) != len(cycle)+1 || ce.Cycle[0] != ce.Cycle[len(ce.Cycle)-1] {
		t.Errorf("cycle %v, want %d objects and back to the first", ce.Cycle, len(cycle))
	}
	for _, k := range cycle {
		if !strings.Contains(err.Error(), k.String()) {
			t.Errorf("error %q does not name %s", err, k)
		}
	}
}

// applyPromptly runs Apply and fails the test if it has not returned
// within a few seconds (a cycle used to make it wait forever).
func applyPromptly(t *testing.T, p *engine.Plan, target engine.Target) *engine.Report {
	t.Helper()
	done := make(chan *engine.Report, 1)
	go func() { done <- engine.Apply(context.Background(), p, target, engine.ApplyOptions{}) }()
	select {
	case rep := <-done:
		return rep
	case <-time.After(5 * time.Second):
		t.Fatal("Apply of a plan with a dependency cycle did not return within 5s")
		return nil
	}
}

// Apply refuses a plan whose changes depend on each other before it
// writes anything, naming the objects of the cycle.
func TestApplyRefusesADependencyCycle(t *testing.T) {
	for _, tt := range cycles() {
		t.Run(tt.name, func(t *testing.T) {
			p := cyclicPlan(tt.deps)
			var target writeCounter
			rep := applyPromptly(t, p, &target)
			checkCycleError(t, rep.Refused, tt.cycle)
			if n := target.writes.Load(); n != 0 {
				t.Errorf("%d writes, want none", n)
			}
			if len(rep.Results) != len(p.Changes) || rep.Count(engine.OutcomeSkipped) != len(p.Changes) {
				t.Errorf("%d results, %d skipped; want every one of the %d changes skipped", len(rep.Results), rep.Count(engine.OutcomeSkipped), len(p.Changes))
			}
			for _, res := range rep.Results {
				if !errors.Is(res.Err, rep.Refused) {
					t.Errorf("%s skipped with %v, want the cycle", res.Change.Key, res.Err)
				}
			}
		})
	}
	// Without the cycle, the same plan applies.
	var target writeCounter
	if rep := applyPromptly(t, cyclicPlan(map[engine.Key][]engine.Key{cmA: {nsA}, quotaA: {nsA}}), &target); !rep.OK() || rep.Refused != nil || target.writes.Load() != 5 {
		t.Errorf("acyclic plan: ok %v, refused %v, %d writes; want 5", rep.OK(), rep.Refused, target.writes.Load())
	}
}

// A saved plan whose changes depend on each other is refused when read,
// before apply takes the lock or reads the cluster; and applied from
// memory anyway, it writes nothing.
func TestPlanFileWithADependencyCycle(t *testing.T) {
	for _, tt := range cycles() {
		t.Run(tt.name, func(t *testing.T) {
			pf, err := engine.NewPlanFile(cyclicPlan(tt.deps), "test", "hash", "ctx", false)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := pf.Write(&buf); err != nil {
				t.Fatal(err)
			}
			_, err = engine.ReadPlanFile(&buf)
			checkCycleError(t, err, tt.cycle)
			if err != nil && !strings.HasPrefix(err.Error(), "read plan file: ") {
				t.Errorf("error %q does not say it is about the plan file", err)
			}
			var target writeCounter
			rep := applyPromptly(t, pf.Plan(), &target)
			checkCycleError(t, rep.Refused, tt.cycle)
			if n := target.writes.Load(); n != 0 {
				t.Errorf("%d writes, want none", n)
			}
		})
	}
}

// Diff refuses desired objects that depend on each other (a bug in compile
// would make them), and so does rendering them in apply order.
func TestDiffRefusesADependencyCycle(t *testing.T) {
	for _, tt := range cycles() {
		t.Run(tt.name, func(t *testing.T) {
			d := &engine.Desired{Stack: "s"}
			for _, c := range cyclicPlan(tt.deps).Changes {
				if c.After != nil {
					d.Objects = append(d.Objects, &engine.Object{Address: c.Address, Object: c.After, DependsOn: c.DependsOn})
				}
			}
			_, err := engine.Diff(d, &engine.Live{}, engine.DiffOptions{})
			checkCycleError(t, err, tt.cycle)
			_, err = d.Ordered()
			checkCycleError(t, err, tt.cycle)
			var buf bytes.Buffer
			if err := render.YAML(&buf, d, false); err == nil {
				t.Error("render.YAML rendered objects that depend on each other")
			}
		})
	}
}
