package compile_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestArgumentForAnotherScheduler checks that an argument only another
// scheduler reads is an error at the argument, naming that scheduler, and
// that the scheduler that reads it accepts it.
func TestArgumentForAnotherScheduler(t *testing.T) {
	tests := []struct {
		name, scheduler, tenant string
		wantUser                string // the scheduler the detail names; "" for a valid stack
	}{
		{"cohort under none", "none", `cohort = "bank" # here`, "kueue"},
		{"cohort under volcano", "volcano", `cohort = "bank" # here`, "kueue"},
		{"borrowing limit under none", "none", `quota "a100" {
    slices          = { "3g.40gb" = 1 }
    borrowing_limit = { "3g.40gb" = 1 } # here
  }`, "kueue"},
		{"lending limit under volcano", "volcano", `quota "a100" {
    slices        = { "3g.40gb" = 1 }
    lending_limit = { "3g.40gb" = 0 } # here
  }`, "kueue"},
		{"weight under kueue", "kueue", `weight = 2 # here`, "volcano"},
		{"weight under none", "none", `weight = 2 # here`, "volcano"},
		{"reclaimable under none", "none", `reclaimable = false # here`, "volcano"},
		{"cohort and limits under kueue", "kueue", `cohort = "bank"
  quota "a100" {
    slices          = { "3g.40gb" = 1 }
    borrowing_limit = { "3g.40gb" = 1 }
    lending_limit   = { "3g.40gb" = 0 }
  }`, ""},
		{"weight and reclaimable under volcano", "volcano", `weight = 2
  reclaimable = false`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `gpuform {
  stack     = "v"
  scheduler = "` + tt.scheduler + `"
}
mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}
pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.halves
}
tenant "a" {
  ` + tt.tenant + `
}
`
			cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
			if diags.HasErrors() {
				t.Fatalf("load: %s", diags.Error())
			}
			diags = compile.Validate(cfg, mig.Default())
			if tt.wantUser == "" {
				if len(diags) > 0 {
					t.Fatalf("valid configuration: %s", diags.Error())
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != "Argument for another scheduler" {
				t.Fatalf("diagnostics %q, want one \"Argument for another scheduler\"", diags.Error())
			}
			d := diags[0]
			for _, want := range []string{`scheduler "` + tt.wantUser + `"`, `scheduler is "` + tt.scheduler + `"`, "tenant.a"} {
				if !strings.Contains(d.Detail, want) {
					t.Errorf("detail %q does not say %s", d.Detail, want)
				}
			}
			lines := strings.Split(src, "\n")
			for i, line := range lines {
				if !strings.HasSuffix(line, "# here") {
					continue
				}
				col := strings.Index(line, "= ") + 3 // the value, as every argument's diagnostic
				if s := d.Subject; s == nil || s.Start.Line != i+1 || s.Start.Column != col {
					t.Errorf("at %v, want main.hcl:%d:%d", s, i+1, col)
				}
			}
		})
	}
}
