package capacity_test

import (
	"reflect"
	"testing"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestQuotasOf checks the typed quota of each tenant of a stack with a MIG
// pool, a renamed time-sliced pool and a whole-GPU pool: its blocks in
// order, its totals, and limits that name every resource the stack offers,
// 0 where the tenant has none.
func TestQuotasOf(t *testing.T) {
	cfg := enginetest.LoadSource(t, `
gpuform { stack = "q" }
mig_layout "mixed" {
  gpu    = "A100-80GB"
  slices = { "1g.10gb" = 2, "3g.40gb" = 1 }
}
pool "a100" {
  gpu           = "A100-80GB"
  node_selector = { "gpuform.dev/node-group" = "a100" }
  mig_layout    = mig_layout.mixed
}
pool "shared" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "shared" }
  time_slicing {
    replicas          = 4
    rename_by_default = true
  }
}
pool "whole" {
  gpu           = "L40S"
  node_selector = { "gpuform.dev/node-group" = "whole" }
}
tenant "a" {
  quota "whole" {
    gpus = 3
  }
  quota "a100" {
    slices = { "1g.10gb" = 4, "3g.40gb" = 0 }
  }
}
tenant "b" {
  quota "shared" {
    gpus = 2
  }
}
tenant "none" {
}
`)
	qs := capacity.QuotasOf(cfg)
	offered := []string{"nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"}
	if !reflect.DeepEqual(qs.Offered, offered) {
		t.Fatalf("offered %v, want %v", qs.Offered, offered)
	}
	for _, tt := range []struct {
		tenant  int
		pools   []string
		covered []string
		hard    capacity.Counts
	}{
		{0, []string{"whole", "a100"}, []string{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"},
			capacity.Counts{"nvidia.com/gpu": 3, "nvidia.com/gpu.shared": 0, "nvidia.com/mig-1g.10gb": 4, "nvidia.com/mig-3g.40gb": 0}},
		{1, []string{"shared"}, []string{"nvidia.com/gpu.shared"},
			capacity.Counts{"nvidia.com/gpu": 0, "nvidia.com/gpu.shared": 2, "nvidia.com/mig-1g.10gb": 0, "nvidia.com/mig-3g.40gb": 0}},
		{2, nil, nil,
			capacity.Counts{"nvidia.com/gpu": 0, "nvidia.com/gpu.shared": 0, "nvidia.com/mig-1g.10gb": 0, "nvidia.com/mig-3g.40gb": 0}},
	} {
		tn := cfg.Tenants[tt.tenant]
		tq := qs.Of(tn)
		if tq != qs.Tenants[tt.tenant] || tq.Tenant != tn {
			t.Fatalf("%s: Of is not the tenant's computed quota", tn.Name)
		}
		var pools []string
		for _, b := range tq.Blocks {
			pools = append(pools, b.Pool)
			for r, n := range b.Nominal {
				if n == 0 {
					t.Errorf("%s: block %s names %s with 0", tn.Name, b.Pool, r)
				}
			}
		}
		if !reflect.DeepEqual(pools, tt.pools) {
			t.Errorf("%s: blocks on %v, want %v", tn.Name, pools, tt.pools)
		}
		if got := tq.Covered(); !reflect.DeepEqual(got, tt.covered) {
			t.Errorf("%s: covered %v, want %v", tn.Name, got, tt.covered)
		}
		if got := tq.Hard(); !reflect.DeepEqual(got, tt.hard) {
			t.Errorf("%s: hard %v, want %v", tn.Name, got, tt.hard)
		}
	}
	if got := qs.Of(nil); got == nil || len(got.Blocks) != 0 || len(got.Hard()) != 0 {
		t.Errorf("quota of an unknown tenant = %+v, want empty", got)
	}
}
