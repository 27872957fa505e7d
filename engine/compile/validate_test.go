package compile_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// validateBase is a valid stack the cases of TestValidate add blocks to: a
// MIG pool of A100s and a time-sliced pool of H100s.
const validateBase = `
gpuform { stack = "v" }
mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}
pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.halves
}
pool "h100" {
  gpu = "H100-80GB"
  time_slicing {
    replicas = 2
  }
}
`

// TestValidate checks Validate's verdict on single mistakes: the summary,
// and that the diagnostic points at the line marked "# here".
func TestValidate(t *testing.T) {
	tests := []struct {
		name, src, summary string
	}{
		{"valid", `
tenant "a" {
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
}
model "m" {
  tenant      = tenant.a
  pool        = pool.a100
  slice       = "3g.40gb"
  format      = "onnx"
  storage_uri = "s3://m"
}`, ""},
		{"one resource on two pools", `
pool "h200" {
  gpu = "H200-141GB"
}
tenant "a" {
  quota "h100" {
    gpus = 2
  }
  quota "h200" { # here
    gpus = 1
  }
}`, "Quota for one resource on two pools"},
		{"system priority", `
priority "system-mine" { # here
  value = 10
}`, "Reserved priority name"},
		{"unknown GPU", `
pool "x" {
  gpu = "Z9000" # here
}`, "Unknown GPU model"},
		{"layout over the GPU", `
mig_layout "greedy" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 3 } # here
}`, "Too many MIG instances"},
		{"quota slice not in layout", `
tenant "a" {
  quota "a100" {
    slices = { "1g.10gb" = 1 } # here
  }
}`, "Slice not in the pool's layout"},
		{"whole GPUs on a MIG pool", `
tenant "a" {
  quota "a100" {
    gpus = 1 # here
  }
}`, "Whole GPUs on a MIG pool"},
		{"the lock's namespace", `
tenant "a" {
  namespace = "gpuform-system" # here
}`, "Reserved namespace"},
		{"the lock's namespace by the tenant's name", `
tenant "gpuform-system" { # here
}`, "Reserved namespace"},
		{"the default namespace", `
tenant "a" {
  namespace = "default" # here
}`, "Reserved namespace"},
		{"kube-system", `
tenant "a" {
  namespace = "kube-system" # here
}`, "Reserved namespace"},
		{"kube-public by the tenant's name", `
tenant "kube-public" { # here
}`, "Reserved namespace"},
		{"kube-node-lease", `
tenant "a" {
  namespace = "kube-node-lease" # here
}`, "Reserved namespace"},
		{"any kube- namespace", `
tenant "a" {
  namespace = "kube-anything" # here
}`, "Reserved namespace"},
		{"the GPU Operator's namespace", `
tenant "a" {
  namespace = "gpu-operator" # here
}`, "Reserved namespace"},
		{"the alerts namespace with alerts", `
tenant "a" {
  namespace = "monitoring" # here
}
tenant "b" {
  alerts {}
}`, "Reserved namespace"},
		{"the alerts namespace without alerts", `
tenant "a" {
  namespace = "monitoring"
}`, ""},
		{"unauthenticated group as admins", `
tenant "a" {
  admins = ["group:system:unauthenticated"] # here
}`, "Cluster-wide RBAC subject"},
		{"authenticated group as viewers", `
tenant "a" {
  viewers = ["group:system:authenticated"] # here
}`, "Cluster-wide RBAC subject"},
		{"masters as editors", `
tenant "a" {
  editors = ["group:system:masters"] # here
}`, "Cluster-wide RBAC subject"},
		{"all service accounts", `
tenant "a" {
  admins = ["group:system:serviceaccounts"] # here
}`, "Cluster-wide RBAC subject"},
		{"the anonymous user", `
tenant "a" {
  admins = ["user:system:anonymous"] # here
}`, "Cluster-wide RBAC subject"},
		{"a system user", `
tenant "a" {
  admins = ["user:system:kube-scheduler"] # here
}`, "Cluster-wide RBAC subject"},
		{"a kube-system service account", `
tenant "a" {
  admins = ["serviceaccount:kube-system:default"] # here
}`, "Cluster-wide RBAC subject"},
		{"ordinary subjects", `
tenant "a" {
  admins  = ["group:research", "user:alice@example.com", "serviceaccount:ci:deployer"]
  viewers = ["group:systems-team", "user:system-admin"]
}`, ""},
		{"duplicate namespace", `
tenant "a" {
  namespace = "shared"
}
tenant "b" {
  namespace = "shared" # here
}`, "Duplicate namespace"},
		{"model without quota on its pool", `
tenant "a" {
  quota "a100" {
    slices = { "3g.40gb" = 1 }
  }
}
model "m" {
  tenant      = tenant.a
  pool        = pool.h100 # here
  gpus        = 1
  format      = "onnx"
  storage_uri = "s3://m"
}`, "No quota on this pool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := validateBase + tt.src
			validateAtHere(t, src, tt.summary, false)
		})
	}
}

// Validate's diagnostics about an argument set from a sensitive variable
// say what is wrong without quoting the value.
func TestValidateHidesSensitiveValues(t *testing.T) {
	const marker = "sv-validate-marker-51c7"
	for _, tc := range []struct{ name, block, summary string }{
		{"quantity", "tenant \"a\" {\n  cpu = var.secret\n}\n", "Invalid quantity"},
		{"subject", "tenant \"a\" {\n  admins = [var.secret]\n}\n", "Invalid RBAC subject"},
		{"subject kind", "tenant \"a\" {\n  admins = [\"${var.secret}:x\"]\n}\n", "Invalid RBAC subject"},
		{"priority value", "priority \"p\" {\n  value = length(var.secret) * 100000000\n}\n", "Invalid priority value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := validateBase + "variable \"secret\" {\n  sensitive = true\n  default   = \"" + marker + "\"\n}\n" + tc.block
			cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
			if diags.HasErrors() {
				t.Fatalf("load: %v", diags)
			}
			diags = compile.Validate(cfg, mig.Default())
			found := false
			for _, d := range diags {
				found = found || d.Summary == tc.summary
				if strings.Contains(d.Detail+d.Summary, marker) || strings.Contains(d.Detail, "2300000000") {
					t.Errorf("%s quotes the sensitive value: %s", d.Summary, d.Detail)
				}
			}
			if !found {
				t.Errorf("no %q diagnostic: %v", tc.summary, diags)
			}
		})
	}
}
