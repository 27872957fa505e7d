package compile_test

import (
	"testing"

	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// BenchmarkCompileLarge compiles size M into its ~10,500 objects.
func BenchmarkCompileLarge(b *testing.B) {
	cfg := enginetest.SizeM(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compile.Compile(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShareLeaves shares the leaf maps of size M's objects, object by
// object as compile does (here over objects built already, whose maps are
// out of the processor's cache). Maps shared already are read as much as
// the first time.
func BenchmarkShareLeaves(b *testing.B) {
	d, err := compile.Compile(enginetest.SizeM(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		compile.ShareLeaves(d.Objects)
	}
}
