package config

import (
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The manager's quota (docs/fleet.md, "The manager's quota"). MultiKueue
// admits a dispatched tenant's workload on the manager before it copies it
// to the workers, so the tenant's ClusterQueue on the manager must admit
// what its workers admit together, no more and no less: the sum, over its
// workers, of the quota it has on each, as each worker's configuration
// evaluates it (cluster.values make them differ). The configuration
// evaluated for the manager carries that sum as the dispatched tenant's
// own quotas and limits, so that compiling it needs nothing of the
// workers.

// dispatchWorkers lists, in fleet order, the workers of the tenants of
// manager (the configuration evaluated for the fleet's manager) that
// MultiKueue dispatches: every member they are placed on but the manager.
// Empty when manager is not evaluated for the manager or dispatches none.
func dispatchWorkers(manager *Config) []string {
	if manager == nil || manager.Cluster == nil || manager.Cluster.Role != RoleManager {
		return nil
	}
	return workersOf(manager, func(*Tenant) bool { return true })
}

// workersOf lists, in fleet order, the workers of the tenants of manager
// dispatched by MultiKueue that keep selects.
func workersOf(manager *Config, keep func(*Tenant) bool) []string {
	set := map[string]bool{}
	for _, t := range manager.Tenants {
		if t.Dispatch != DispatchMultiKueue || !keep(t) {
			continue
		}
		for _, name := range t.Clusters {
			if m := manager.Member(name); m != nil && m.Role != RoleManager {
				set[name] = true
			}
		}
	}
	var out []string
	for _, m := range manager.Fleet {
		if set[m.Name] {
			out = append(out, m.Name)
		}
	}
	return out
}

// sumDispatched rewrites every tenant of manager dispatched by MultiKueue
// to what its workers give it together: workers are the members'
// configurations by name (a worker missing there gives nothing). Its
// quota blocks become one per pool it has quota in on any worker, in the
// order first met (workers in the tenant's order, each worker's blocks in
// order), with the gpus, slices, borrowing and lending limits of that pool
// summed over the workers; its cpu, memory and pods are summed likewise.
//
// A pool a worker's quota names that is not placed on the manager is
// added to manager.FlavorPools (the first worker's evaluation of it): the
// manager compiles its ResourceFlavor only, for the ClusterQueue to name.
// No job of a dispatched tenant runs on the manager, so it needs no nodes
// of the pool, no node labels and no device configuration. The
// departments of the dispatched tenants get their workers' sums in those
// pools too (sumDepartments). Summing again gives the same result: the
// sums are made from the workers' blocks.
func sumDispatched(manager *Config, workers map[string]*Config) {
	if len(dispatchWorkers(manager)) == 0 {
		return
	}
	manager.FlavorPools = nil // summing again gives the same result
	local := map[string]*Pool{}
	for _, p := range manager.Pools {
		local[p.Name] = p
	}
	for _, t := range manager.Tenants {
		if t.Dispatch != DispatchMultiKueue {
			continue
		}
		var onWorkers []*Tenant
		for _, name := range t.Clusters {
			if m := manager.Member(name); m == nil || m.Role == RoleManager {
				continue
			}
			if w := workers[name]; w != nil {
				if wt := tenantNamed(w, t.Name); wt != nil {
					onWorkers = append(onWorkers, wt)
				}
			}
		}
		t.Quotas = sumQuotas(t, onWorkers, func(p *Pool) *Pool {
			if lp, ok := local[p.Name]; ok {
				return lp
			}
			local[p.Name] = p
			manager.FlavorPools = append(manager.FlavorPools, p)
			return p
		})
		sumNodeResources(t, onWorkers)
	}
	sumDepartments(manager, workers)
}

// tenantNamed is cfg's tenant called name, or nil.
func tenantNamed(cfg *Config, name string) *Tenant {
	for _, t := range cfg.Tenants {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// sumQuotas sums the quota blocks of onWorkers (tenant t on each worker)
// by pool. pool maps a worker's pool to the manager's. Each summed block
// keeps the source ranges of t's own block for the pool when t has one on
// the manager, else of the first worker's, so that diagnostics point at
// the quota block written.
func sumQuotas(t *Tenant, onWorkers []*Tenant, pool func(*Pool) *Pool) []*Quota {
	var out []*Quota
	byPool := map[string]*Quota{}
	// perWorker[pool] are the blocks, one per worker, summed into it.
	perWorker := map[string][]*Quota{}
	for _, wt := range onWorkers {
		for _, q := range wt.Quotas {
			sum, ok := byPool[q.PoolName]
			if !ok {
				sum = &Quota{Meta: q.Meta, PoolName: q.PoolName}
				if own := quotaFor(t, q.PoolName); own != nil {
					sum.Meta = own.Meta
				}
				if q.Pool != nil {
					sum.Pool = pool(q.Pool)
				}
				byPool[q.PoolName] = sum
				out = append(out, sum)
			}
			perWorker[q.PoolName] = append(perWorker[q.PoolName], q)
		}
	}
	for _, sum := range out {
		addBlocks(sum, perWorker[sum.PoolName], true)
	}
	return out
}

// addBlocks adds blocks, one per worker, into sum: their gpus and slices,
// and their borrowing and lending limits (sumLimits; lending says whether
// a lending limit left out counts as the worker's whole nominal quota).
func addBlocks(sum *Quota, blocks []*Quota, lending bool) {
	for _, q := range blocks {
		sum.GPUs += q.GPUs
		sum.Slices = addCounts(sum.Slices, q.Slices)
	}
	sum.BorrowingLimit = sumLimits(blocks, func(q *Quota) map[string]int { return q.BorrowingLimit }, false)
	sum.LendingLimit = sumLimits(blocks, func(q *Quota) map[string]int { return q.LendingLimit }, lending)
}

// quotaFor is t's quota block for pool, or nil.
func quotaFor(t *Tenant, pool string) *Quota {
	for _, q := range t.Quotas {
		if q.PoolName == pool {
			return q
		}
	}
	return nil
}

// addCounts adds b to a (a new map when a is nil); nil when both are empty.
func addCounts(a, b map[string]int) map[string]int {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]int, len(b))
	}
	for k, v := range b {
		a[k] += v
	}
	return a
}

// sumLimits sums the borrowing or lending limits (limits) of blocks, one
// per worker, by key ("gpus" or a MIG profile). A limit one worker does
// not set is what that worker leaves unlimited: a borrowing limit left out
// on any worker is left out of the sum (the tenant may borrow without
// bound there); a lending limit left out is the worker's whole nominal
// quota for the key (lending is bounded by it), when another worker sets
// one. Nil when no worker sets one.
func sumLimits(blocks []*Quota, limits func(*Quota) map[string]int, lending bool) map[string]int {
	keys := map[string]bool{}
	for _, q := range blocks {
		for k := range limits(q) {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		total, bounded := 0, true
		for _, q := range blocks {
			v, ok := limits(q)[k]
			switch {
			case ok:
				total += v
			case lending:
				total += nominalOf(q, k)
			default:
				bounded = false
			}
		}
		if bounded {
			out[k] = total
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// nominalOf is what quota block q gives for key ("gpus" or a MIG profile).
func nominalOf(q *Quota, key string) int {
	if key == "gpus" {
		return q.GPUs
	}
	return q.Slices[key]
}

// sumNodeResources sets t's cpu, memory and pods to their sums over
// onWorkers. Left out on any worker (unbounded there) leaves it out on
// the manager; a worker's value that is not a quantity is kept as it is,
// for validation on the manager to refuse as on the worker.
func sumNodeResources(t *Tenant, onWorkers []*Tenant) {
	if len(onWorkers) == 0 {
		return
	}
	t.CPU = sumQuantities(onWorkers, func(wt *Tenant) string { return wt.CPU })
	t.Memory = sumQuantities(onWorkers, func(wt *Tenant) string { return wt.Memory })
	if t.HasAttr("pods") {
		pods := 0
		for _, wt := range onWorkers {
			pods += wt.Pods
		}
		t.Pods = pods
	}
}

// sumQuantities is the sum of the quantities of onWorkers that value
// reads: "" when one is "", the first that does not parse as it is.
func sumQuantities(onWorkers []*Tenant, value func(*Tenant) string) string {
	var total resource.Quantity
	for _, wt := range onWorkers {
		v := value(wt)
		if v == "" {
			return ""
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return v
		}
		total.Add(q)
	}
	if total.IsZero() {
		return "0"
	}
	return total.String()
}

// withDispatchWorkers completes the configuration of a fleet's manager
// loaded alone (LoadFS with Options.Cluster set to it): it evaluates the
// dispatched tenants' workers from parsed and sums their quotas into it,
// as LoadFleetFS does. An error of a worker's evaluation is an error of
// the manager's load too (its quota depends on it), said for the workers
// it was found for unless the manager's own evaluation found it.
func withDispatchWorkers(parsed *parsedConfig, opts Options, manager *Config, diags hcl.Diagnostics) (*Config, hcl.Diagnostics) {
	names := dispatchWorkers(manager)
	if len(names) == 0 || parsed == nil || diags.HasErrors() {
		return manager, diags
	}
	workers := map[string]*Config{}
	var perWorker []hcl.Diagnostics
	for _, name := range names {
		o := opts
		o.Cluster = name
		w, wd := parsed.evaluateFor(o)
		workers[name] = w
		var errs hcl.Diagnostics
		for _, d := range wd {
			if d.Severity == hcl.DiagError {
				errs = append(errs, d)
			}
		}
		perWorker = append(perWorker, errs)
	}
	sumDispatched(manager, workers)
	type key struct {
		summary string
		rng     hcl.Range
	}
	own := map[key]bool{}
	for _, d := range diags {
		k := key{summary: d.Summary}
		if d.Subject != nil {
			k.rng = *d.Subject
		}
		own[k] = true
	}
	out := diags
	for _, d := range MergeMemberDiagnostics(names, perWorker) {
		k := key{summary: d.Summary}
		if d.Subject != nil {
			k.rng = *d.Subject
		}
		if !own[k] {
			out = append(out, d)
		}
	}
	return manager, out
}

// sumFleetDispatched sums, in the manager's configuration among members
// (names[i] is members[i]'s member, perMember[i] its diagnostics), the
// dispatched tenants' quotas over their workers' configurations, as
// withDispatchWorkers does for the manager loaded alone: not when the
// manager's own evaluation failed.
func sumFleetDispatched(names []string, members []*Config, perMember []hcl.Diagnostics) {
	byName := make(map[string]*Config, len(members))
	for i, m := range members {
		byName[names[i]] = m
	}
	for i, m := range members {
		if !perMember[i].HasErrors() && len(dispatchWorkers(m)) > 0 {
			sumDispatched(m, byName)
		}
	}
}
