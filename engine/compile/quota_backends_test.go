package compile

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// TestSchedulersLeaveQuotaAlone calls every scheduler backend with the
// tenants' quotas of examples/bank (cohorts, borrowing and lending
// limits) and checks that none writes into the quota it reads: the quota
// is computed once per compile and read by every backend, the tenancy
// policies and the ResourceQuota, so a backend that changed it would
// change what the others write.
func TestSchedulersLeaveQuotaAlone(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "bank", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": src}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for name, mk := range schedulers() {
		t.Run(name, func(t *testing.T) {
			quotas := capacity.QuotasOf(cfg)
			want := map[string]capacity.Counts{}
			for _, tq := range quotas.Tenants {
				for _, b := range tq.Blocks {
					want[tq.Tenant.Name+"/"+b.Pool] = maps.Clone(b.Nominal)
				}
			}
			s := mk(cfg.Settings)
			for _, tn := range cfg.Tenants {
				first := s.ResourceQuota(quotas, tn)
				if again := s.ResourceQuota(quotas, tn); !reflect.DeepEqual(first, again) {
					t.Errorf("%s: ResourceQuota gave %v, then %v", tn.Name, first, again)
				}
				s.Tenant(tn, quotas.Of(tn))
			}
			for _, tq := range quotas.Tenants {
				for _, b := range tq.Blocks {
					if k := tq.Tenant.Name + "/" + b.Pool; !reflect.DeepEqual(b.Nominal, want[k]) {
						t.Errorf("%s: quota is %v after the backend ran, was %v", k, b.Nominal, want[k])
					}
				}
			}
		})
	}
}
