package compile_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// orgSource is a stack with an organisation tree: ai (4 GPUs of its own)
// holds research (1 of its own, may borrow 2 from ai, lends ai at most 1)
// and product; research holds alpha and beta, product gamma. SCHED and
// EXTRA are replaced by each case.
const orgSource = `
gpuform {
  stack     = "org"
  scheduler = "SCHED"
}

pool "a100" {
  gpu = "A100-80GB"
}

department "ai" {
  weight = 3
  quota "a100" {
    gpus = 4
  }
}

department "research" {
  parent = department.ai
  quota "a100" {
    gpus            = 1
    borrowing_limit = { gpus = 2 }
    lending_limit   = { gpus = 1 }
  }
}

department "product" {
  parent = department.ai
}

tenant "alpha" {
  department = department.research
  quota "a100" {
    gpus = 2
  }
}

tenant "beta" {
  department = department.research
  quota "a100" {
    gpus          = 3
    lending_limit = { gpus = 1 }
  }
}

tenant "gamma" {
  department = department.product
  quota "a100" {
    gpus = 2
  }
}
EXTRA
`

func orgConfig(sched, extra string) string {
	return strings.NewReplacer("SCHED", sched, "EXTRA", extra).Replace(orgSource)
}

// TestOrgTreeValidation: each configuration has one error, at the line
// marked "# here", before any cluster call.
func TestOrgTreeValidation(t *testing.T) {
	tests := []struct {
		name, sched, src, summary string
	}{
		{"valid under kueue", "kueue", "", ""},
		{"empty department", "kueue", `department "idle" { # here
}`, "Empty department"},
		{"limit on a top-level department", "kueue", `department "top" {
  quota "a100" {
    gpus = 1
    borrowing_limit = { gpus = 1 } # here
  }
}
tenant "delta" {
  department = department.top
}`, "Limit on a top-level department"},
		{"lending over the subtree", "kueue", `department "small" {
  parent = department.ai
  quota "a100" {
    gpus          = 1
    lending_limit = { gpus = 4 } # here
  }
}
tenant "delta" {
  department = department.small
  quota "a100" {
    gpus = 2
  }
}`, "Lending limit over the department's quota"},
		{"department named after the stack", "kueue", `department "org" { # here
}
tenant "delta" {
  department = department.org
}`, "Department named after the stack"},
		{"tenant joining a department's cohort", "kueue", `tenant "delta" {
  cohort = "research" # here
}`, "Cohort of a department"},
		{"department quota on an unknown pool", "kueue", `department "lost" {
  quota "h100" { # here
    gpus = 1
  }
}
tenant "delta" {
  department = department.lost
}`, "Unknown pool"},
		{"department not a DNS subdomain", "kueue", `department "Big_Team" { # here
}
tenant "delta" {
  department = department.Big_Team
}`, "Invalid Kueue cohort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			validateAtHere(t, orgConfig(tt.sched, tt.src), tt.summary, tt.summary == "")
		})
	}
	// A department's Cohort takes at most 64 flavors, as a ClusterQueue.
	t.Run("65 quota blocks on a department", func(t *testing.T) {
		src := "gpuform {\n  stack     = \"org\"\n  scheduler = \"kueue\"\n}\n" +
			strings.Replace(manyFlavors(65), "tenant \"a\" {", "department \"a\" {", 1) +
			"tenant \"t\" {\n  department = department.a\n}\n"
		validateAtHere(t, src, "Too many quota blocks for Kueue", false)
	})
	// Under a scheduler without the tree: one error, at the first
	// department.
	for _, sched := range []string{"none"} {
		t.Run("departments under "+sched, func(t *testing.T) {
			validateAtHere(t, `
gpuform {
  stack     = "org"
  scheduler = "`+sched+`"
}
pool "a100" {
  gpu = "A100-80GB"
}
department "ai" { # here
  quota "a100" {
    gpus = 1
  }
}
department "research" {
  parent = department.ai
}
tenant "alpha" {
  department = department.research
  quota "a100" {
    gpus = 1
  }
}
`, "Departments need scheduler \"kueue\" or \"volcano\"", false)
		})
	}
}

// TestOrgTreeCompilesToCohorts: each department is a Cohort with its
// parent, its own quota and its weight; each tenant's ClusterQueue is in
// its department's Cohort and waits for it; each tenant's ResourceQuota
// allows what the tree lets it borrow.
func TestOrgTreeCompilesToCohorts(t *testing.T) {
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(orgConfig("kueue", ""))}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := compile.Validate(cfg, mig.Default()); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]*engine.Object{}
	for _, o := range d.Objects {
		objs[o.Object.GetKind()+"/"+o.Object.GetNamespace()+"/"+o.Object.GetName()] = o
	}
	str := func(key string, path ...string) string {
		t.Helper()
		o := objs[key]
		if o == nil {
			t.Fatalf("no object %s", key)
		}
		s, _, _ := unstructured.NestedString(o.Object.Object, path...)
		return s
	}
	checks := []struct {
		key, want string
		path      []string
	}{
		{"Cohort//ai", "", []string{"spec", "parentName"}},
		{"Cohort//ai", "3", []string{"spec", "fairSharing", "weight"}},
		{"Cohort//research", "ai", []string{"spec", "parentName"}},
		{"Cohort//product", "ai", []string{"spec", "parentName"}},
		{"ClusterQueue//alpha", "research", []string{"spec", "cohortName"}},
		{"ClusterQueue//gamma", "product", []string{"spec", "cohortName"}},
		// alpha: its 2, research's subtree (research 1, beta lends 1) and
		// at most 2 borrowed from ai: 2 + 2 + 2 = 6.
		{"ResourceQuota/alpha/gpuform", "6", []string{"spec", "hard", "requests.nvidia.com/gpu"}},
		// beta: its 3, research 1 + alpha 2, and 2 from ai = 8.
		{"ResourceQuota/beta/gpuform", "8", []string{"spec", "hard", "requests.nvidia.com/gpu"}},
		// gamma: its 2, ai's 4 and what research lends up (at most 1) = 7.
		{"ResourceQuota/gamma/gpuform", "7", []string{"spec", "hard", "requests.nvidia.com/gpu"}},
	}
	for _, c := range checks {
		if got := str(c.key, c.path...); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.key, strings.Join(c.path, "."), got, c.want)
		}
	}
	rg, _, _ := unstructured.NestedSlice(objs["Cohort//research"].Object.Object, "spec", "resourceGroups")
	if len(rg) != 1 || !strings.Contains(fmt.Sprint(rg), "borrowingLimit:2") {
		t.Errorf("Cohort research resourceGroups %v, want its own quota with borrowingLimit 2", rg)
	}
	deps := map[engine.Key]bool{}
	for _, k := range objs["ClusterQueue//alpha"].DependsOn {
		deps[k] = true
	}
	if !deps[engine.Key{Group: "kueue.x-k8s.io", Kind: "Cohort", Name: "research"}] {
		t.Errorf("ClusterQueue alpha depends on %v, not on its Cohort", objs["ClusterQueue//alpha"].DependsOn)
	}
}
