package compile

import (
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

// stackGPUResources lists, in order, every extended resource the stack's
// pools offer: the resources every tenant's ResourceQuota names.
func stackGPUResources(cfg *config.Config) []string {
	set := map[string]bool{}
	for _, p := range cfg.Pools {
		for _, r := range capacity.Offered(p) {
			set[r] = true
		}
	}
	return sortedStrings(set)
}

// gpuPools is the value of a tenant's gpuform.dev/gpu-pools annotation:
// pool=resource for every resource a quota block of the tenant gives it,
// in order; under Kueue, every resource the tenant's ClusterQueue covers
// that the block's pool offers (Kueue may admit a workload there by
// borrowing). Empty when the tenant has no GPU quota: its pods may then
// ask for no nvidia.com/ resource at all.
func gpuPools(t *config.Tenant, kueue bool) string {
	covered := map[string]bool{}
	for _, q := range t.Quotas {
		for r, n := range capacity.QuotaResources(q) {
			covered[r] = covered[r] || n > 0
		}
	}
	var pairs []string
	for _, q := range t.Quotas {
		res := capacity.QuotaResources(q)
		for r := range covered {
			if res[r] > 0 || (kueue && q.Pool != nil && slices.Contains(capacity.Offered(q.Pool), r)) {
				pairs = append(pairs, q.PoolName+"="+r)
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
	return sortedStrings(set)
}

// tenancyAnnotations writes on a tenant's Namespace what the stack's
// admission policies read: its allowed priorities and GPU pools, and its
// default priority as a label (the default-priority policies' bindings
// select namespaces by it).
func (c *compiler) tenancyAnnotations(t *config.Tenant, labels, annotations map[string]any) {
	annotations[engine.AnnotPriorities] = strings.Join(allowedPriorities(c.cfg, t), ",")
	annotations[engine.AnnotGPUPools] = gpuPools(t, c.cfg.Settings.Scheduler == config.SchedulerKueue)
	if t.DefaultPriority != nil {
		labels[engine.LabelDefaultPriority] = t.DefaultPriority.Name
		c.defaultPriorities[t.DefaultPriority.Name] = t.DefaultPriority
	}
}
