package config_test

import (
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
)

const departmentBase = `
gpuform {
  stack     = "org"
  scheduler = "kueue"
}

pool "a100" {
  gpu = "A100-80GB"
}
`

// TestDepartmentErrors: what the language refuses of the organisation
// tree, each at the line marked "# here" (file:line:col), before any
// validation or cluster call.
func TestDepartmentErrors(t *testing.T) {
	tests := []struct{ name, src, summary string }{
		{"a cycle", `department "a" {
  parent = department.b # here
}
department "b" {
  parent = department.a
}`, "Reference cycle"},
		{"its own parent", `department "a" {
  parent = department.a # here
}`, "Reference cycle"},
		{"an unknown parent", `department "a" {
  parent = department.nope # here
}`, "Reference to undeclared department"},
		{"a parent that is a tenant", `tenant "t" {}
department "a" {
  parent = tenant.t # here
}`, "Invalid reference"},
		{"a department given as a string", `department "a" {}
tenant "t" {
  department = "a" # here
}`, "Invalid reference"},
		{"cohort and department", `department "a" {}
tenant "t" {
  department = department.a
  cohort     = "x" # here
}`, "Conflicting cohort"},
		{"a negative weight", `department "a" {
  weight = -1 # here
}`, "Invalid weight"},
		{"two quotas on one pool", `department "a" {
  quota "a100" {
    gpus = 1
  }
  quota "a100" { # here
    gpus = 1
  }
}`, "Duplicate quota block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := departmentBase + tt.src
			_, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
			want := 0
			for i, line := range strings.Split(src, "\n") {
				if strings.HasSuffix(line, "# here") {
					want = i + 1
				}
			}
			for _, d := range diags {
				if d.Summary == tt.summary && d.Subject != nil && d.Subject.Start.Line == want && d.Subject.Filename == "main.hcl" {
					return
				}
			}
			t.Errorf("no %q at main.hcl:%d; got %s", tt.summary, want, diags.Error())
		})
	}
}

// TestDepartmentLinks: a tenant's department is linked, its cohort is the
// department's name, and a department's parent and quota pools are linked.
func TestDepartmentLinks(t *testing.T) {
	src := departmentBase + `
department "ai" {
  weight = 0.5
}
department "research" {
  parent = department.ai
  quota "a100" {
    gpus = 1
  }
}
tenant "t" {
  department = department.research
}
`
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(cfg.Departments) != 2 || len(cfg.Tenants) != 1 {
		t.Fatalf("%d departments, %d tenants", len(cfg.Departments), len(cfg.Tenants))
	}
	ai, research, tn := cfg.Departments[0], cfg.Departments[1], cfg.Tenants[0]
	if research.Parent != ai || ai.Parent != nil {
		t.Errorf("parents: research %v, ai %v", research.Parent, ai.Parent)
	}
	if !ai.HasWeight || ai.Weight != 0.5 || research.HasWeight {
		t.Errorf("weights: ai %v %v, research %v", ai.HasWeight, ai.Weight, research.HasWeight)
	}
	if len(research.Quotas) != 1 || research.Quotas[0].Pool != cfg.Pools[0] || research.Quotas[0].GPUs != 1 {
		t.Errorf("research quotas %+v", research.Quotas)
	}
	if tn.Department != research || tn.Cohort != "research" {
		t.Errorf("tenant department %v cohort %q, want research", tn.Department, tn.Cohort)
	}
}
