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
