package config_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gpuform/gpuform/config"
)

// deptDispatchSrc: department d holds t (dispatched by MultiKueue from
// the pure manager hub to east and west), s (not dispatched) and the
// sub-department sub with its tenant u (not dispatched); d's own quota is
// 1 GPU on east and 2 on west. Department other holds a tenant that is
// not dispatched.
const deptDispatchSrc = `gpuform {
  stack     = "s"
  scheduler = "kueue"
}

cluster "hub" {
  role = "manager"
}

cluster "east" {
  kubeconfig_secret = "east"
  values = { d = 1 }
}

cluster "west" {
  kubeconfig_secret = "west"
  values = { d = 2 }
}

pool "a" {
  gpu      = "A100-80GB"
  clusters = ["east", "west"]
}

department "d" {
  quota "a" {
    gpus = lookup(cluster.values, "d", 0)
  }
}

department "sub" {
  parent = department.d
  quota "a" {
    gpus          = 1
    lending_limit = { gpus = 1 }
  }
}

department "other" {
  quota "a" {
    gpus = 4
  }
}

tenant "t" {
  department = department.d
  dispatch   = "multikueue"
  quota "a" {
    gpus = 1
  }
}

tenant "s" {
  department = department.d
  quota "a" {
    gpus          = 3
    lending_limit = { gpus = 2 }
  }
}

tenant "u" {
  department = department.sub
  quota "a" {
    gpus = 1
  }
}

tenant "o" {
  department = department.other
  quota "a" {
    gpus = 1
  }
}
`

// TestManagerDepartmentSumsWorkers: on the manager, the department of a
// dispatched tenant holds, in a pool not placed there, the sum over the
// tenant's workers of what the department shares there with it: its own
// quota (1 on east, 2 on west), what its tenants that are not dispatched
// lend (s: 2 on each) and what its sub-departments without a dispatched
// tenant lend up (sub: 1 of its 2 on each): 4 + 5. The dispatched
// tenant's own sum is unchanged (1 + 1); departments with no dispatched
// tenant are not on the manager; each worker keeps its own figures.
func TestManagerDepartmentSumsWorkers(t *testing.T) {
	cfg, diags := loadMain(deptDispatchSrc, "hub")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := departmentNames(cfg); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("departments on the manager %q, want d only", got)
	}
	want := []string{"a (pool a): gpus=9 slices={} borrowing={} lending={}"}
	if got := deptQuotaLines(cfg.Departments[0]); !slices.Equal(got, want) {
		t.Errorf("d on the manager:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if q := cfg.Departments[0].Quotas; len(q) == 1 && (q[0].Pool == nil || len(cfg.FlavorPools) != 1 || q[0].Pool != cfg.FlavorPools[0]) {
		t.Errorf("d's quota on a does not name the manager's flavor pool a")
	}
	if got := quotaLines(tenantOf(cfg, "t"))[1]; got != "a (pool a): gpus=2 slices={} borrowing={} lending={}" {
		t.Errorf("t on the manager: %s, want 2 GPUs", got)
	}
	east, diags := loadMain(deptDispatchSrc, "east")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, d := range east.Departments {
		if d.Name == "d" {
			if got := deptQuotaLines(d); !slices.Equal(got, []string{"a (pool a): gpus=1 slices={} borrowing={} lending={}"}) {
				t.Errorf("d on east: %q, want its own 1 GPU", got)
			}
		}
	}

	// Loaded with the fleet, the manager has the same sum.
	_, members, diags := config.LoadFleetFS(fstest.MapFS{"main.hcl": &fstest.MapFile{Data: []byte(deptDispatchSrc)}}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, m := range members {
		if m.Cluster.Name == "hub" {
			if got := deptQuotaLines(m.Departments[0]); !slices.Equal(got, want) {
				t.Errorf("d on the manager loaded with the fleet: %q, want %q", got, want)
			}
		}
	}
}

func departmentNames(cfg *config.Config) []string {
	var out []string
	for _, d := range cfg.Departments {
		out = append(out, d.Name)
	}
	return out
}

// deptQuotaLines describes a department's quota blocks, one line each.
func deptQuotaLines(d *config.Department) []string {
	lines := quotaLines(&config.Tenant{Quotas: d.Quotas})
	return lines[1:]
}
