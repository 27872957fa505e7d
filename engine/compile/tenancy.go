package compile

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// What a tenant may use, written where the stack's admission policies read
// it: its Namespace, which tenants cannot edit (a Namespace is
// cluster-scoped; tenant roles are namespaced). Every tenant's namespace
// carries all of it, so that a setting left empty allows nothing beyond
// what the configuration gives rather than everything.

// gpuPools is the value, from its quota, of a tenant's gpuform.dev/gpu-pools annotation:
// pool=resource for every resource a quota block of the tenant gives it,
// in order; under Kueue, every resource the tenant's ClusterQueue covers
// that the block's pool offers (Kueue may admit a workload there by
// borrowing). Empty when the tenant has no GPU quota: its pods may then
// ask for no nvidia.com/ resource at all.
func gpuPools(quota *capacity.TenantQuota, kueue bool) string {
	covered := quota.Covered()
	var pairs []string
	for _, b := range quota.Blocks {
		for _, r := range covered {
			if b.Nominal[r] > 0 || (kueue && slices.Contains(b.Offered, r)) {
				pairs = append(pairs, b.Pool+"="+r)
			}
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// allowedPriorities are the priority classes a tenant's pods and workloads
// may name: its priorities, or every priority of the stack when it lists
// none, and its default priority; in order. Never a class the stack does
// not define (system-node-critical and system-cluster-critical included).
func allowedPriorities(cfg *config.Config, t *config.Tenant) []string {
	list := t.Priorities
	if len(list) == 0 {
		list = cfg.Priorities
	}
	set := map[string]bool{}
	for _, p := range list {
		set[p.Name] = true
	}
	if t.DefaultPriority != nil {
		set[t.DefaultPriority.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// tenancyAnnotations writes on a tenant's Namespace what the stack's
// admission policies read: its allowed priorities and GPU pools, and its
// default priority as a label (the default-priority policies' bindings
// select namespaces by it).
func (c *compiler) tenancyAnnotations(t *config.Tenant, labels, annotations map[string]any) {
	annotations[engine.AnnotPriorities] = strings.Join(allowedPriorities(c.cfg, t), ",")
	annotations[engine.AnnotGPUPools] = gpuPools(c.quotas.Of(t), c.cfg.Settings.Scheduler == config.SchedulerKueue)
	if t.DefaultPriority != nil {
		labels[engine.LabelDefaultPriority] = t.DefaultPriority.Name
		c.defaultPriorities[t.DefaultPriority.Name] = t.DefaultPriority
	}
}
