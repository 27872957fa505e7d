package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestBadLayoutHasOneDiagnostic breaks the MIG layout (or the pool's GPU)
// of examples/quickstart, whose quotas and model ask for the layout's
// slices, and checks that Validate reports the one root error at the
// layout or pool: no follow-on error at the quotas and the model (a pool
// that "offers whole GPUs", a refused profile listed as offered).
func TestBadLayoutHasOneDiagnostic(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		layoutGPU = "mig_layout \"halves\" {\n  gpu    = \"A100-80GB\""
		slices    = `slices = { "3g.40gb" = 2 }`
		poolGPU   = "pool \"a100\" {\n  gpu        = \"A100-80GB\""
	)
	tests := []struct {
		name, old, new string
		summary, line  string // the one diagnostic, and text of its line
	}{
		{"unknown profile", slices, `slices = { "3g.41gb" = 2 }`, "Unknown MIG profile", `"3g.41gb" = 2`},
		{"a profile over its maximum", slices, `slices = { "4g.40gb" = 2 }`, "Too many MIG instances", `"4g.40gb" = 2`},
		{"too many slices", slices, `slices = { "3g.40gb" = 3 }`, "Too many MIG instances", `"3g.40gb" = 3`},
		{"compute exhausted", slices, `slices = { "7g.80gb" = 1, "1g.10gb" = 1 }`, "MIG compute slices exhausted", `"7g.80gb" = 1`},
		{"overlapping device groups", slices, `device {
    indexes = [0, 1]
    slices  = { "3g.40gb" = 2 }
  }
  device {
    indexes = [1]
    slices  = { "3g.40gb" = 2 }
  }`, "Overlapping device groups", "indexes = [1]"},
		{"unknown layout GPU", layoutGPU, strings.Replace(layoutGPU, "A100-80GB", "Z9000", 1), "Unknown GPU model", `"Z9000"`},
		{"layout GPU without MIG", layoutGPU, strings.Replace(layoutGPU, "A100-80GB", "T4", 1), "GPU does not support MIG", `"T4"`},
		{"layout for another GPU", layoutGPU, strings.Replace(layoutGPU, "A100-80GB", "H100-80GB", 1), "MIG layout for another GPU", "mig_layout = mig_layout.halves"},
		{"pool GPU without MIG", poolGPU, strings.Replace(poolGPU, "A100-80GB", "T4", 1), "GPU does not support MIG", "mig_layout = mig_layout.halves"},
		{"unknown pool GPU", poolGPU, strings.Replace(poolGPU, "A100-80GB", "Z9000", 1), "Unknown GPU model", `"Z9000"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(src), tt.old) {
				t.Fatalf("examples/quickstart/main.hcl no longer has %q", tt.old)
			}
			bad := strings.Replace(string(src), tt.old, tt.new, 1)
			cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(bad)}, config.Options{})
			if diags.HasErrors() {
				t.Fatalf("load: %s", diags.Error())
			}
			diags = compile.Validate(cfg, mig.Default())
			if len(diags) != 1 || diags[0].Summary != tt.summary {
				t.Fatalf("diagnostics %q, want exactly one %q", diags.Error(), tt.summary)
			}
			lines := strings.Split(bad, "\n")
			if s := diags[0].Subject; s == nil || s.Start.Line < 1 || !strings.Contains(lines[s.Start.Line-1], tt.line) {
				t.Errorf("%s at %v, want the line with %s", tt.summary, s, tt.line)
			}
		})
	}
}
