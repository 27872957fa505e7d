package capacity_test

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// TestDepartmentQuotaCountsOnThePool: a department's own quota is
// computed with the tenants' arithmetic and claims the pool's GPUs as a
// tenant's quota does: 3 of the tenant and 1 of its department fit 4
// GPUs, 2 of the department do not.
func TestDepartmentQuotaCountsOnThePool(t *testing.T) {
	nodes := []*unstructured.Unstructured{enginetest.GPUNode("h100-0", "h100", "NVIDIA-H100-80GB-HBM3", 4, "550.54.15")}
	for _, tt := range []struct {
		dept    int
		wantErr string
	}{
		{1, ""},
		{2, "claim 5 of nvidia.com/gpu, but the pool has 4"},
	} {
		t.Run(strconv.Itoa(tt.dept), func(t *testing.T) {
			cfg := enginetest.LoadSource(t, `
gpuform {
  stack     = "cap"
  scheduler = "kueue"
}
pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "h100" }
}
department "d" {
  quota "h100" {
    gpus = `+strconv.Itoa(tt.dept)+`
  }
}
tenant "a" {
  department = department.d
  quota "h100" {
    gpus = 3
  }
}
`)
			qs := capacity.QuotasOf(cfg)
			if len(qs.Departments) != 1 || qs.OfDepartment(cfg.Departments[0]).Blocks[0].Nominal["nvidia.com/gpu"] != int64(tt.dept) {
				t.Fatalf("department quotas %+v", qs.Departments)
			}
			c, diags := capacity.CheckFrom(cfg, nodes, capacity.DRAInventory{}, nil, mig.Default())
			if tt.wantErr != "" {
				if !strings.Contains(diags.Error(), tt.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tt.wantErr, diags)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if len(c.Rows) != 1 || c.Rows[0].Quota != 4 || c.Rows[0].Free != 0 {
				t.Errorf("rows %+v, want quota 4 of 4", c.Rows)
			}
		})
	}
}
