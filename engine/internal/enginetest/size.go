package enginetest

import (
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// SizeM is the loaded and validated configuration of benchmark size M of
// testdata/gen (1,000 tenants, 5,000 models, 500 nodes), with
// changePercent of its tenants changed.
func SizeM(tb testing.TB, changePercent int) *config.Config {
	tb.Helper()
	for _, s := range gen.Sizes() {
		if s.Name != "M" {
			continue
		}
		o := s.Options()
		o.ChangePercent = changePercent
		dir := tb.TempDir()
		if err := gen.Write(dir, o); err != nil {
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
