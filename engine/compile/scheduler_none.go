package compile

import (
	"iter"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// noScheduler is scheduler "none": the default kube-scheduler, with tenants
// bounded by their ResourceQuota alone. It adds nothing; the other
// schedulers embed it for the blocks they do not care about.
type noScheduler struct{}

func newNoScheduler(*config.Settings) Scheduler { return noScheduler{} }

// Priority adds nothing: the PriorityClass is enough.
func (noScheduler) Priority(*config.Priority) []*engine.Object { return nil }

// Pool adds nothing: models select their pool by node label.
func (noScheduler) Pool(*config.Pool) []*engine.Object { return nil }

// Tenant adds nothing: the ResourceQuota bounds the tenant.
func (noScheduler) Tenant(*config.Tenant, *capacity.TenantQuota) []*engine.Object { return nil }

// ResourceQuota adds nothing: the limits are what the quota blocks set.
func (noScheduler) ResourceQuota(*capacity.Quotas, *config.Tenant) capacity.Counts { return nil }

// Objects adds nothing.
func (noScheduler) Objects(*config.Config) []*engine.Object { return nil }

// Model leaves the workload as it is.
func (noScheduler) Model(*Workload) {}

// Arguments: scheduler none reads no scheduler-specific argument.
func (noScheduler) Arguments() []string { return nil }

// Applied reads the ResourceQuotas' requests.<resource> limits.
func (noScheduler) Applied(objs iter.Seq[*unstructured.Unstructured]) (capacity.Counts, bool) {
	return appliedOf(objs, engine.KindResourceQuota, func(obj map[string]any, add func(string, string)) {
		hard, _, _ := unstructured.NestedMap(obj, "spec", "hard")
		for name, v := range hard {
			q, ok := v.(string)
			if r, found := strings.CutPrefix(name, "requests."); found && ok {
				add(r, q)
			}
			if _, found := capacity.IsDeviceClassQuota(name); found && ok {
				add(name, q)
			}
		}
	})
}

// Validate has nothing to check.
func (noScheduler) Validate(*config.Config, *capacity.Quotas) hcl.Diagnostics { return nil }
