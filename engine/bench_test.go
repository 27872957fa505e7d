package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// The size of examples/large (make large) and of BenchmarkLoadLarge.
const (
	largeTenants = 1000
	largeModels  = 5000
)

var largeShapes = []struct {
	name    string
	forEach bool
}{
	{"explicit", false},
	{"for_each", true},
}

// loadAndValidate is one iteration of BenchmarkLoadLarge: what `gpuform
// validate` does with the directory.
func loadAndValidate(tb testing.TB, dir string) *config.Config {
	cfg, diags := config.LoadDir(dir, config.Options{})
	if !diags.HasErrors() {
		diags = append(diags, compile.Validate(cfg, mig.Default())...)
	}
	if diags.HasErrors() {
		tb.Fatalf("generated configuration is invalid:\n%s", renderDiags(cfg, diags))
	}
	return cfg
}

func renderDiags(cfg *config.Config, diags hcl.Diagnostics) string {
	if len(diags) > 10 {
		diags = diags[:10]
	}
	var b strings.Builder
	dw := config.DiagnosticWriter{Files: cfg.Files}
	_ = dw.Write(&b, diags)
	return b.String()
}

// BenchmarkLoadLarge loads and validates 1,000 tenants and 5,000 models, as
// explicit blocks and as for_each blocks over locals maps.
func BenchmarkLoadLarge(b *testing.B) {
	for _, shape := range largeShapes {
		b.Run(shape.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := gen.Write(dir, gen.Options{Tenants: largeTenants, Models: largeModels, ForEach: shape.forEach}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				loadAndValidate(b, dir)
			}
		})
	}
}

// TestLoadLarge checks that the generated configurations validate, with the
// expected numbers of blocks, in both shapes.
func TestLoadLarge(t *testing.T) {
	tenants, models := largeTenants, largeModels
	if testing.Short() {
		tenants, models = 100, 500
	}
	for _, shape := range largeShapes {
		t.Run(shape.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := gen.Write(dir, gen.Options{Tenants: tenants, Models: models, Nodes: 4, ForEach: shape.forEach}); err != nil {
				t.Fatal(err)
			}
			cfg := loadAndValidate(t, dir)
			if cfg.Settings.Stack != gen.Stack || cfg.Settings.Scheduler != config.SchedulerKueue {
				t.Errorf("stack %q scheduler %q, want %q kueue", cfg.Settings.Stack, cfg.Settings.Scheduler, gen.Stack)
			}
			if got := len(cfg.Tenants); got != tenants {
				t.Errorf("%d tenants, want %d", got, tenants)
			}
			if got := len(cfg.Models); got != models {
				t.Errorf("%d models, want %d", got, models)
			}
			if len(cfg.Priorities) != 3 || len(cfg.MIGLayouts) < 2 || len(cfg.Pools) < 4 {
				t.Errorf("%d priorities, %d MIG layouts, %d pools; want 3, at least 2, at least 4",
					len(cfg.Priorities), len(cfg.MIGLayouts), len(cfg.Pools))
			}
			gpus := map[string]bool{}
			sliced := 0
			for _, p := range cfg.Pools {
				if p.MIGLayout != nil {
					gpus[p.MIGLayout.GPU] = true
				}
				if p.TimeSlicing != nil {
					sliced++
				}
			}
			if !gpus["A100-80GB"] || !gpus["H100-80GB"] || sliced == 0 {
				t.Errorf("MIG pool GPUs %v and %d time-sliced pools; want A100-80GB and H100-80GB, and some", gpus, sliced)
			}
			names := map[string]bool{}
			for _, tn := range cfg.Tenants {
				names[tn.Name] = true
				if len(tn.Quotas) == 0 || tn.DefaultPriority == nil || len(tn.Priorities) == 0 || len(tn.Admins) == 0 {
					t.Errorf("%s: %d quotas, default priority %v, %d priorities, %d admins; want all set",
						tn.Address, len(tn.Quotas), tn.DefaultPriority, len(tn.Priorities), len(tn.Admins))
				}
			}
			if !names["team-0001"] || len(names) != tenants {
				t.Errorf("tenant names: %d distinct, team-0001 present %t", len(names), names["team-0001"])
			}
			perTenant := map[*config.Tenant]int{}
			for _, m := range cfg.Models {
				perTenant[m.Tenant]++
			}
			if len(perTenant) != tenants {
				t.Errorf("models use %d tenants, want all %d", len(perTenant), tenants)
			}
		})
	}
}

// TestGenerateDeterministic checks that the same options give the same bytes
// and that both shapes name their tenants and models alike.
func TestGenerateDeterministic(t *testing.T) {
	o := gen.Options{Tenants: 50, Models: 200, Nodes: 2}
	a, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := gen.Generate(o)
	if !bytes.Equal(a, b) {
		t.Error("two runs with the same options differ")
	}
	o.ForEach = true
	fe, _ := gen.Generate(o)
	if bytes.Equal(a, fe) {
		t.Error("-foreach wrote the explicit shape")
	}
	for _, src := range [][]byte{a, fe} {
		if !bytes.Equal(hclwrite.Format(src), src) {
			t.Error("generated configuration is not in gpuform fmt form")
		}
	}
	load := func(src []byte) *config.Config {
		cfg, diags := config.LoadSources(map[string][]byte{gen.FileName: src}, config.Options{})
		diags = append(diags, compile.Validate(cfg, mig.Default())...)
		if diags.HasErrors() {
			t.Fatalf("invalid:\n%s", renderDiags(cfg, diags))
		}
		return cfg
	}
	ex, fo := load(a), load(fe)
	for i := range ex.Models {
		em, fm := ex.Models[i], fo.Models[i]
		if em.Name != fm.Name || em.Tenant.Name != fm.Tenant.Name || em.Pool.Name != fm.Pool.Name ||
			em.Slice != fm.Slice || em.GPUs != fm.GPUs || em.Priority.Name != fm.Priority.Name {
			t.Fatalf("model %d differs between shapes: %s/%s/%s/%q/%d vs %s/%s/%s/%q/%d", i,
				em.Name, em.Tenant.Name, em.Pool.Name, em.Slice, em.GPUs,
				fm.Name, fm.Tenant.Name, fm.Pool.Name, fm.Slice, fm.GPUs)
		}
	}
}
