package compile_test

import (
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// sizeM returns the loaded and validated configuration of benchmark size M
// (1,000 tenants, 5,000 models, 500 nodes).
func sizeM(tb testing.TB) *config.Config {
	tb.Helper()
	for _, s := range gen.Sizes() {
		if s.Name != "M" {
			continue
		}
		dir := tb.TempDir()
		if err := gen.Write(dir, s.Options()); err != nil {
			tb.Fatal(err)
		}
		cfg, diags := config.LoadDir(dir, config.Options{})
		if !diags.HasErrors() {
			diags = append(diags, compile.Validate(cfg, mig.Default())...)
		}
		if diags.HasErrors() {
			tb.Fatalf("size M is invalid: %s", diags.Error())
		}
		return cfg
	}
	tb.Fatal("no size M")
	return nil
}

// BenchmarkCompileLarge compiles size M into its ~10,500 objects.
func BenchmarkCompileLarge(b *testing.B) {
	cfg := sizeM(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compile.Compile(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
