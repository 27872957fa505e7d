package compile_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// upstreamBase is validateBase with a scheduler: SCHEDULER is replaced.
const upstreamBase = `
gpuform {
  stack     = "v"
  scheduler = "SCHEDULER"
}
mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}
pool "a100" {
  gpu        = "A100-80GB"
  mig_layout = mig_layout.halves
}
`

// TestValidateUpstreamLimits checks the limits of the upstream APIs that
// gpuform's language alone would let through, each a diagnostic at the
// line marked "# here": the device plugin's minimum of time-slicing
// replicas, the Volcano Queue's weight range, Kueue's cohort pattern, its
// webhook's rules on limits, the ClusterQueue's maxItems and flavor-resource
// combinations, and priority names that become label values.
func TestValidateUpstreamLimits(t *testing.T) {
	tests := []struct {
		name, scheduler, src, summary string
	}{
		{"time-slicing with one replica", "none", `
pool "l4" {
  gpu = "L4"
  time_slicing {
    replicas = 1 # here
  }
}`, "Invalid time-slicing replicas"},
		{"time-slicing with two replicas", "none", `
pool "l4" {
  gpu = "L4"
  time_slicing {
    replicas = 2
  }
}`, ""},
		{"Volcano weight zero", "volcano", `
tenant "a" {
  weight = 0 # here
}`, "Volcano weight out of range"},
		{"Volcano weight over the maximum", "volcano", `
tenant "a" {
  weight = 65536 # here
}`, "Volcano weight out of range"},
		{"Volcano weight at the maximum", "volcano", `
tenant "a" {
  weight = 65535
}`, ""},
		{"weight without Volcano: refused as another scheduler's, not checked", "kueue", `
tenant "a" {
  weight = 0 # here
}`, "Argument for another scheduler"},
		{"cohort not a DNS subdomain", "kueue", `
tenant "a" {
  cohort = "Risk_Team" # here
}`, "Invalid Kueue cohort"},
		{"cohort without Kueue: refused as another scheduler's, not checked", "volcano", `
tenant "a" {
  cohort = "Risk_Team" # here
}`, "Argument for another scheduler"},
		{"borrowing limit without a cohort", "kueue", `
tenant "a" {
  cohort = ""
  quota "a100" {
    slices          = { "3g.40gb" = 2 }
    borrowing_limit = { "3g.40gb" = 1 } # here
  }
}`, "Limit without a cohort"},
		{"lending limit without a cohort", "kueue", `
tenant "a" {
  cohort = ""
  quota "a100" {
    slices        = { "3g.40gb" = 2 }
    lending_limit = { "3g.40gb" = 1 } # here
  }
}`, "Limit without a cohort"},
		{"no cohort and no limits", "kueue", `
tenant "a" {
  cohort = ""
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
}`, ""},
		{"lending limit over the quota", "kueue", `
tenant "a" {
  quota "a100" {
    slices        = { "3g.40gb" = 2 }
    lending_limit = {
      "3g.40gb" = 3 # here
    }
  }
}`, "Lending limit over the quota"},
		{"lending limit at the quota", "kueue", `
tenant "a" {
  quota "a100" {
    slices        = { "3g.40gb" = 2 }
    lending_limit = { "3g.40gb" = 2 }
  }
}`, ""},
		{"65 quota blocks", "kueue", manyFlavors(65), "Too many quota blocks for Kueue"},
		{"64 quota blocks", "kueue", manyFlavors(64), ""},
		{"over 512 flavor-resource combinations", "kueue", manyCombinations(t, 14), "Too many flavor-resource combinations for Kueue"},
		{"512 flavor-resource combinations or fewer", "kueue", manyCombinations(t, 13), ""},
		{"priority name longer than a label value", "kueue", longPriority(), "Priority name too long for a label"},
		{"long priority name without Kueue", "none", longPriority(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(upstreamBase, "SCHEDULER", tt.scheduler, 1) + tt.src
			validateAtHere(t, src, tt.summary, true)
		})
	}
}

// manyFlavors is a tenant with quota blocks on n pools of whole GPUs: n
// flavors of one resource; the 65th block is marked.
func manyFlavors(n int) string {
	var b strings.Builder
	b.WriteString("pool \"p\" {\n  for_each = toset([")
	for i := range n {
		fmt.Fprintf(&b, "%q, ", fmt.Sprintf("%02d", i))
	}
	b.WriteString("])\n  gpu = \"L4\"\n}\ntenant \"a\" {\n")
	for i := range n {
		mark := ""
		if i == 64 {
			mark = " # here"
		}
		fmt.Fprintf(&b, "  quota \"p-%02d\" {%s\n    gpus = 1\n  }\n", i, mark)
	}
	b.WriteString("}\n")
	return b.String()
}

// manyCombinations is a tenant with quota blocks on n MIG pools whose
// layouts offer every profile of six GPU models (39 distinct resources:
// A100-40GB and A100-80GB share 1g.10gb): n × 39 flavor-resource
// combinations, over 512 from 14 on; the last block is marked.
func manyCombinations(t *testing.T, n int) string {
	cat := mig.Default()
	var b strings.Builder
	gpus := []string{"A30-24GB", "A100-40GB", "A100-80GB", "H100-94GB", "H200-141GB", "B200-180GB"}
	quotas := make([]string, len(gpus))
	for i, key := range gpus {
		g, ok := cat.Lookup(key)
		if !ok {
			t.Fatalf("no %s in the catalog", key)
		}
		fmt.Fprintf(&b, "mig_layout \"all%d\" {\n  gpu = %q\n", i, key)
		var slices []string
		for j, p := range g.Profiles {
			fmt.Fprintf(&b, "  device {\n    indexes = [%d]\n    slices  = { %q = 1 }\n  }\n", j, p.Name)
			slices = append(slices, fmt.Sprintf("%q = 1", p.Name))
		}
		b.WriteString("}\n")
		quotas[i] = strings.Join(slices, ", ")
	}
	for i := range n {
		fmt.Fprintf(&b, "pool \"m%02d\" {\n  gpu        = %q\n  mig_layout = mig_layout.all%d\n}\n", i, gpus[i%len(gpus)], i%len(gpus))
	}
	b.WriteString("tenant \"a\" {\n")
	for i := range n {
		mark := ""
		if i == n-1 {
			mark = " # here"
		}
		fmt.Fprintf(&b, "  quota \"m%02d\" {%s\n    slices = { %s }\n  }\n", i, mark, quotas[i%len(gpus)])
	}
	b.WriteString("}\n")
	return b.String()
}

// longPriority is a 64-character priority, a valid PriorityClass name,
// that a model on Kueue carries as a label value.
func longPriority() string {
	name := strings.Repeat("p", 64)
	return fmt.Sprintf(`
priority %q { # here
  value = 100
}
tenant "a" {
  quota "a100" {
    slices = { "3g.40gb" = 1 }
  }
}
model "m" {
  tenant      = tenant.a
  pool        = pool.a100
  slice       = "3g.40gb"
  format      = "onnx"
  storage_uri = "s3://m"
  priority    = priority.%s
}`, name, name)
}

// TestNoCohortWritesNoCohortName: a tenant with cohort = "" gets a
// ClusterQueue without spec.cohortName; Kueue's CRD refuses an empty one.
func TestNoCohortWritesNoCohortName(t *testing.T) {
	src := strings.Replace(upstreamBase, "SCHEDULER", "kueue", 1) + `
tenant "a" {
  cohort = ""
  quota "a100" {
    slices = { "3g.40gb" = 2 }
  }
}`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range d.Objects {
		if o.Object.GetKind() != "ClusterQueue" {
			continue
		}
		found = true
		if spec, _ := o.Object.Object["spec"].(map[string]any); spec == nil {
			t.Error("ClusterQueue without spec")
		} else if c, ok := spec["cohortName"]; ok {
			t.Errorf("ClusterQueue has cohortName %q, want none", c)
		}
	}
	if !found {
		t.Fatal("no ClusterQueue compiled")
	}
}
