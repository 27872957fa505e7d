package capacity

import (
	"maps"
	"slices"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// Counts are integer amounts by extended resource name (nvidia.com/gpu, a
// MIG profile's resource). Conversions to quantities or strings happen
// where an object is written, not here.
type Counts map[string]int64

// Add adds every count of o to c.
func (c Counts) Add(o Counts) {
	for r, n := range o {
		c[r] += n
	}
}

// BlockQuota is what one quota block of a tenant gives it on one pool.
type BlockQuota struct {
	// Block is the quota block; Pool its pool's name.
	Block *config.Quota
	Pool  string
	// Offered lists, in order, the resources the block's pool offers
	// (offered); nil when the pool is unknown.
	Offered []string
	// Nominal is what the block claims by resource, zero amounts left out.
	Nominal Counts
	stack   string
}

// Resource is the resource that key of quota block b (a MIG profile, or
// "gpus") counts: the profile's resource, or b's pool's GPU resource; on a
// DRA pool, the device quota of the pool's DeviceClass for it.
func (b BlockQuota) Resource(key string) string {
	return keyResource(b.stack, b.Block.Pool, key)
}

// Limits maps borrowing or lending limits of b's block (by MIG profile or
// "gpus") to the resources they limit.
func (b BlockQuota) Limits(limits map[string]int) Counts {
	out := make(Counts, len(limits))
	for k, v := range limits {
		out[b.Resource(k)] = int64(v)
	}
	return out
}

// keyResource is Resource for quota key key of pool p in stack.
func keyResource(stack string, p *config.Pool, key string) string {
	switch {
	case p != nil && p.DRA() && key == "gpus":
		return DeviceClassQuota(DeviceClass(stack, p.Name, WholeGPUClass))
	case p != nil && p.DRA():
		return DeviceClassQuota(DeviceClass(stack, p.Name, key))
	case key == "gpus":
		return GPUResource(p)
	}
	return mig.Resource(key)
}

// QuotaKey is the key of a ResourceQuota's spec.hard that bounds the
// requests of resource r: requests.<r>, and a DeviceClass's device quota
// as it is (it has no requests. form).
func QuotaKey(r string) string {
	if _, ok := IsDeviceClassQuota(r); ok {
		return r
	}
	return "requests." + r
}

// TenantQuota is a tenant's GPU quota, the one value every reader of it
// reads: the ResourceQuota, the scheduler backends, the tenancy policies,
// capacity and usage. Its Hard counts name every resource the stack's
// pools offer, so a resource the tenant has no quota for is 0 by
// construction (Kubernetes does not limit a resource a ResourceQuota does
// not name).
type TenantQuota struct {
	// Tenant is the tenant; Blocks its quota blocks, in order.
	Tenant *config.Tenant
	Blocks []BlockQuota
	// Offered lists, in order, every resource the stack's pools offer.
	Offered []string
}

// Quotas are the GPU quotas of every tenant of a configuration, computed
// once from it.
type Quotas struct {
	// Tenants are the tenants' quotas, in the configuration's order.
	Tenants []*TenantQuota
	// Offered lists, in order, every resource the stack's pools offer.
	Offered  []string
	byTenant map[*config.Tenant]*TenantQuota
	// Departments are the departments' own quotas, in the configuration's
	// order (department.go).
	Departments  []*DepartmentQuota
	byDepartment map[*config.Department]*DepartmentQuota
}

// QuotasOf computes the GPU quota of every tenant of cfg.
func QuotasOf(cfg *config.Config) *Quotas {
	stack := cfg.Settings.Stack
	all := map[string]bool{}
	for _, p := range cfg.Pools {
		for _, r := range offered(stack, p) {
			all[r] = true
		}
		if p.DRA() {
			// NVIDIA's driver's own DeviceClass maps nvidia.com/gpu to DRA
			// devices (extendedResourceName): named, 0 unless a
			// device-plugin pool offers it, so it is no way around the
			// per-class quotas.
			all[mig.ResourceGPU] = true
		}
	}
	qs := &Quotas{Offered: slices.Sorted(maps.Keys(all)), byTenant: map[*config.Tenant]*TenantQuota{}}
	for _, t := range cfg.Tenants {
		tq := &TenantQuota{Tenant: t, Offered: qs.Offered, Blocks: blocksOf(stack, t.Quotas)}
		qs.Tenants = append(qs.Tenants, tq)
		qs.byTenant[t] = tq
	}
	qs.departments(cfg)
	return qs
}

// Of is tenant t's quota; an empty one (nothing offered, no blocks) for a
// tenant the configuration does not hold.
func (qs *Quotas) Of(t *config.Tenant) *TenantQuota {
	if tq, ok := qs.byTenant[t]; ok {
		return tq
	}
	return &TenantQuota{Tenant: t}
}

// blocksOf are the quotas of quota blocks qs (a tenant's or a
// department's) on their pools, in order.
func blocksOf(stack string, qs []*config.Quota) []BlockQuota {
	out := make([]BlockQuota, 0, len(qs))
	for _, q := range qs {
		b := BlockQuota{Block: q, Pool: q.PoolName, Nominal: blockNominal(stack, q), stack: stack}
		if q.Pool != nil {
			b.Offered = offered(stack, q.Pool)
		}
		out = append(out, b)
	}
	return out
}

// blockNominal is what quota block q claims, by GPU resource (keyResource):
// its slices by MIG profile and its gpus, zero amounts left out.
func blockNominal(stack string, q *config.Quota) Counts {
	res := Counts{}
	for prof, n := range q.Slices {
		if n > 0 {
			res[keyResource(stack, q.Pool, prof)] += int64(n)
		}
	}
	if q.GPUs > 0 {
		res[keyResource(stack, q.Pool, "gpus")] += int64(q.GPUs)
	}
	return res
}

// Covered lists, in order, the resources any of the tenant's blocks
// claims (a non-zero amount of: Nominal leaves zeros out).
func (tq *TenantQuota) Covered() []string {
	set := map[string]bool{}
	for _, b := range tq.Blocks {
		for r := range b.Nominal {
			set[r] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// Total is the sum of the tenant's blocks, by resource.
func (tq *TenantQuota) Total() Counts {
	out := Counts{}
	for _, b := range tq.Blocks {
		out.Add(b.Nominal)
	}
	return out
}

// Hard is the GPU limits of the tenant's ResourceQuota before its
// scheduler adds to them: every offered resource, 0 where the tenant has
// no quota, plus its blocks' sums.
func (tq *TenantQuota) Hard() Counts {
	out := Counts{}
	for _, r := range tq.Offered {
		out[r] = 0
	}
	out.Add(tq.Total())
	return out
}

// offered lists, in order, the extended resources the nodes of pool p
// advertise: each MIG profile of its layout (and nvidia.com/gpu for a
// device group with MIG off), its shared replicas' resource, or whole GPUs.
// Every tenant's quota names each of them (0 where it has none), since
// Kubernetes does not limit a resource a ResourceQuota does not name. A
// DRA pool offers the device quota of each of its DeviceClasses.
func offered(stack string, p *config.Pool) []string {
	set := map[string]bool{}
	if p.DRA() {
		for class := range DeviceClasses(stack, p) {
			set[DeviceClassQuota(class)] = true
		}
		return slices.Sorted(maps.Keys(set))
	}
	switch {
	case p.MIGLayout != nil && len(p.MIGLayout.Devices) == 0:
		for prof := range p.MIGLayout.Slices {
			set[mig.Resource(prof)] = true
		}
	case p.MIGLayout != nil:
		for _, g := range p.MIGLayout.Devices {
			if !g.Enabled {
				set[mig.ResourceGPU] = true
				continue
			}
			for prof := range g.Slices {
				set[mig.Resource(prof)] = true
			}
		}
	default:
		set[GPUResource(p)] = true
	}
	return slices.Sorted(maps.Keys(set))
}
