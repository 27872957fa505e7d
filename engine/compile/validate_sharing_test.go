package compile_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
)

// sharingBase is a stack without MIG pools: GPUs shared by time-slicing
// and MPS; PIN is replaced by the gpuform block's pin_drivers.
const sharingBase = `
gpuform {
  stack       = "s"
  pin_drivers = PIN
}
tenant "t" {
  quota "p" {
    gpus = 8
  }
}
`

// TestValidateSharingLimits checks what the NVIDIA device plugin, its MPS
// daemon and the GPU Operator refuse of shared pools, models on them, a
// model's env and driver pins, each a diagnostic at the line marked
// "# here", and that the configurations next to each limit pass.
func TestValidateSharingLimits(t *testing.T) {
	model := func(gpus, env string) string {
		return `
model "m" {
  tenant      = tenant.t
  pool        = pool.p
  format      = "onnx"
  storage_uri = "s3://m"
  ` + gpus + `
  env = {
    ` + env + `
  }
}`
	}
	mps := func(body string) string {
		return "pool \"p\" {\n  gpu = \"H100-80GB\"\n  mps {\n" + body + "\n  }\n}\n"
	}
	ts := func(body string) string {
		return "pool \"p\" {\n  gpu = \"L4\"\n  time_slicing {\n" + body + "\n  }\n}\n"
	}
	tests := []struct {
		name, pin, src, summary string
	}{
		{"MPS with one replica", "false", mps("    replicas = 1 # here"), "Invalid MPS replicas"},
		{"MPS with two replicas", "false", mps("    replicas = 2"), ""},
		{"MPS with 48 replicas", "false", mps("    replicas = 48"), ""},
		{"MPS with 49 replicas", "false", mps("    replicas = 49 # here"), "Too many MPS replicas"},
		{"time-slicing with one replica", "false", ts("    replicas = 1 # here"), "Invalid time-slicing replicas"},
		{"time-slicing and MPS on one pool", "false", `
pool "p" {
  gpu = "H100-80GB"
  time_slicing {
    replicas = 2
  }
  mps { # here
    replicas = 2
  }
}`, "Conflicting GPU sharing"},
		{"MIG layout and MPS on one pool", "false", `
pool "p" {
  gpu = "L4"
}
mig_layout "l" {
  gpu    = "H100-80GB"
  slices = { "3g.40gb" = 2 }
}
pool "q" {
  gpu        = "H100-80GB"
  mig_layout = mig_layout.l
  mps { # here
    replicas = 2
  }
}`, "Conflicting GPU sharing"},
		{"MPS beside a MIG pool", "false", strings.Replace(mps("    replicas = 4"), "mps {", "mps { # here", 1) + `
mig_layout "l" {
  gpu    = "H100-80GB"
  slices = { "3g.40gb" = 2 }
}
pool "q" {
  gpu        = "H100-80GB"
  mig_layout = mig_layout.l
}`, "MPS beside MIG pools"},
		{"two MPS replicas per model", "false", mps("    replicas = 4") + model("gpus = 2 # here", ""), "More than one shared GPU"},
		{"one MPS replica per model", "false", mps("    replicas = 4") + model("gpus = 1", ""), ""},
		{"two MPS replicas per model, allowed", "false", mps("    replicas = 4\n    fail_requests_greater_than_one = false") + model("gpus = 2", ""), ""},
		{"two time-slicing replicas per model", "false", ts("    replicas = 4") + model("gpus = 2", ""), ""},
		{"two time-slicing replicas per model, refused", "false", ts("    replicas = 4\n    fail_requests_greater_than_one = true") + model("gpus = 2 # here", ""), "More than one shared GPU"},
		{"env name with a dash", "false", ts("    replicas = 4") + model("", `"MY-VAR" = "1" # here`), "Invalid environment variable name"},
		{"env name starting with a digit", "false", ts("    replicas = 4") + model("", `"1VAR" = "1" # here`), "Invalid environment variable name"},
		{"env sets NVIDIA_VISIBLE_DEVICES", "false", ts("    replicas = 4") + model("", `NVIDIA_VISIBLE_DEVICES = "all" # here`), "Reserved environment variable"},
		{"env sets the MPS pipe", "false", mps("    replicas = 4") + model("", `CUDA_MPS_PIPE_DIRECTORY = "/tmp" # here`), "Reserved environment variable"},
		{"env with allocator settings", "false", mps("    replicas = 4") + model("", `PYTORCH_CUDA_ALLOC_CONF = "expandable_segments:True"
    CUDA_VISIBLE_DEVICES = "0"`), ""},
		{"driver pin on a range", "true", "pool \"p\" {\n  gpu = \"L4\"\n  driver_version = \">= 550\" # here\n}", "Driver pin is not one version"},
		{"driver range without pins", "false", "pool \"p\" {\n  gpu = \"L4\"\n  driver_version = \">= 550\"\n}", ""},
		{"driver pin", "true", "pool \"p\" {\n  gpu = \"L4\"\n  driver_version = \"550.54.15\"\n}", ""},
		{"two driver pins on the same nodes", "true", `
pool "p" {
  gpu            = "L4"
  node_selector  = { pool = "x" }
  driver_version = "550.54.15"
}
pool "q" {
  gpu            = "L4"
  node_selector  = { pool = "x" }
  driver_version = "= 560.35.03" # here
}`, "Overlapping driver pins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(sharingBase, "PIN", tt.pin, 1) + tt.src
			validateAtHere(t, src, tt.summary, true)
		})
	}
}

// A model's env from a sensitive variable: a bad name is reported without
// the name or any value, and a good one marks the InferenceService
// sensitive, which render leaves out (docs/security.md: never echo a
// sensitive value).
func TestModelEnvFromSensitiveVariable(t *testing.T) {
	const src = `
gpuform { stack = "s" }
variable "env" {
  type      = map(string)
  default   = { KEY = "s3cr3t-value" }
  sensitive = true
}
pool "p" {
  gpu = "L4"
}
tenant "t" {
  quota "p" {
    gpus = 1
  }
}
model "m" {
  tenant      = tenant.t
  pool        = pool.p
  format      = "onnx"
  storage_uri = "s3://m"
  env         = var.env
}
`
	for _, tt := range []struct{ key, summary string }{
		{"KEY", ""},
		{"SECRET-NAME", "Invalid environment variable name"},
		{"NVIDIA_SECRET", "Reserved environment variable"},
	} {
		t.Run(tt.key, func(t *testing.T) {
			cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(strings.Replace(src, "{ KEY =", "{ "+tt.key+" =", 1))}, config.Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			diags = compile.Validate(cfg, mig.Default())
			if tt.summary != "" {
				if len(diags) != 1 || diags[0].Summary != tt.summary {
					t.Fatalf("diagnostics %q, want one %q", diags.Error(), tt.summary)
				}
				if d := diags[0].Detail; strings.Contains(d, tt.key) || strings.Contains(d, "s3cr3t") || !strings.Contains(d, "(sensitive)") {
					t.Errorf("the diagnostic shows the sensitive env: %s", d)
				}
				return
			}
			if len(diags) > 0 {
				t.Fatal(diags.Error())
			}
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			isvc := d.Lookup(engine.Key{Group: "serving.kserve.io", Kind: "InferenceService", Namespace: "t", Name: "m"})
			if isvc == nil || !isvc.Sensitive {
				t.Fatalf("the InferenceService holding a sensitive env is not marked sensitive: %+v", isvc)
			}
			var buf bytes.Buffer
			if err := render.YAML(&buf, d, false); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(buf.String(), "s3cr3t") {
				t.Errorf("render printed the sensitive env:\n%s", buf.String())
			}
			buf.Reset()
			if err := render.YAML(&buf, d, true); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "value: s3cr3t-value") {
				t.Errorf("--show-sensitive lacks the env:\n%s", buf.String())
			}
		})
	}
}
