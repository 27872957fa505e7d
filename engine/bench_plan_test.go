package engine_test

import (
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// BenchmarkDiffLarge diffs size M against a cluster where it was applied
// (no-op), the same with every object settled by the refresh (as a no-op
// plan diffs it), and the same cluster against the configuration with 10%
// of the tenants changed.
func BenchmarkDiffLarge(b *testing.B) {
	base, err := compile.Compile(enginetest.SizeM(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	live := enginetest.Applied(b, base)
	for _, u := range live.Objects {
		rawManagedFields(u) // as refresh keeps them
	}
	settled := enginetest.Applied(b, base)
	objs := settled.Objects
	settled.Objects, settled.Settled, settled.SettledFor = map[engine.Key]*unstructured.Unstructured{}, map[engine.Key]bool{}, base
	s := engine.NewSettler(base)
	for k, u := range objs {
		rawManagedFields(u)
		kept, ok := s.Settle(u)
		settled.Objects[k] = kept
		if ok {
			settled.Settled[k] = true
		}
	}
	changed, err := compile.Compile(enginetest.SizeM(b, 10))
	if err != nil {
		b.Fatal(err)
	}
	// The test cluster's ClusterPolicy does not point at the device-plugin
	// ConfigMap yet: that is the one change of the no-op case.
	for _, c := range []struct {
		name    string
		desired *engine.Desired
		live    *engine.Live
		changes int
	}{{"no-op", base, live, 1}, {"no-op-settled", base, settled, 1}, {"10%-changed", changed, live, 201}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := engine.Diff(c.desired, c.live, engine.DiffOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if n := len(p.Changes); n != c.changes {
					b.Fatalf("%d changes, want %d", n, c.changes)
				}
			}
		})
	}
}

// BenchmarkRenderLarge renders the plan of size M from an empty cluster
// (every object a create) as text and as JSON.
func BenchmarkRenderLarge(b *testing.B) {
	d, err := compile.Compile(enginetest.SizeM(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	p, err := engine.Diff(d, enginetest.EmptyLive(b), engine.DiffOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := render.Text(io.Discard, p, render.TextOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := render.JSON(io.Discard, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
