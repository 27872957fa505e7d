package compile

import (
	"slices"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// tenancy checks what the stack's quotas and admission policies need to
// hold a tenant to its configuration.
func (v *validator) tenancy() {
	for _, p := range v.cfg.Priorities {
		if strings.HasPrefix(p.Name, "system-") {
			v.errorf(p.DeclRange, "Reserved priority name", "Priority %s: names starting with \"system-\" are reserved for Kubernetes' own priority classes, which no tenant may use. Choose another name.", p.Name)
		}
	}
	for _, t := range v.cfg.Tenants {
		if v.cfg.Settings.Scheduler != config.SchedulerKueue {
			v.onePoolPerResource(v.quotas.Of(t))
		}
		// Under Kueue a tenant with models hears it from the Kueue
		// check (its models carry the name as a label too).
		if p := t.DefaultPriority; p != nil && len(p.Name) > 63 && !(v.cfg.Settings.Scheduler == config.SchedulerKueue && hasModel(v.cfg, t)) {
			v.errorf(t.Range("default_priority"), "Default priority name too long for a label", "%s is the default priority of %s: its name (%d characters) becomes the Namespace label gpuform.dev/default-priority, whose values have at most 63 characters.", p.Address, t.Address, len(p.Name))
		}
	}
}

// onePoolPerResource refuses a tenant whose quota blocks give it one
// extended resource on two pools (Kueue counts each pool apart: see
// poolsPolicy). A ResourceQuota bounds a namespace per
// resource name, not per node: with nvidia.com/gpu on an H100 pool and an
// L40S pool the tenant could spend both quotas on either pool, and take
// GPUs another tenant's quota counts on.
func (v *validator) onePoolPerResource(quota *capacity.TenantQuota) {
	t := quota.Tenant
	first := map[string]*config.Quota{}
	for _, b := range quota.Blocks {
		q := b.Block
		for _, r := range b.Offered {
			if b.Nominal[r] == 0 {
				continue
			}
			prev, ok := first[r]
			if !ok {
				first[r] = q
				continue
			}
			v.errorf(q.DeclRange, "Quota for one resource on two pools", "Tenant %s has quota for %s on pool %s and on pool %s. Kubernetes bounds a namespace per resource, not per pool, so the tenant could use both quotas on either pool. Give the tenant quota for %s on one pool only (another tenant namespace for the other pool), or give the pools distinct resources (a MIG layout, or time-slicing with rename_by_default).", t.Name, r, prev.PoolName, q.PoolName, r)
		}
	}
}

// hasModel reports whether a model of cfg belongs to tenant t.
func hasModel(cfg *config.Config, t *config.Tenant) bool {
	return slices.ContainsFunc(cfg.Models, func(m *config.Model) bool { return m.Tenant == t })
}
