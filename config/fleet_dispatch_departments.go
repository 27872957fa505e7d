package config

import (
	"maps"
	"slices"
)

// The manager's departments (docs/fleet.md, "Departments on the
// manager"). On a worker, a dispatched tenant in a department may use
// beyond its own quota its department's quota and what the department's
// other members lend. On the manager its ClusterQueue is in the same
// department's Cohort, but the department's quota in a pool not placed on
// the manager is dropped there (as every quota in a pool off the member),
// and the tenants that are not dispatched are not on the manager at all:
// the manager would admit less than a single worker does, and a job that
// needs its department's quota would never be dispatched. So, in each
// flavor pool, the department's quota on the manager is the sum over its
// dispatched tenants' workers of what it shares there with them: its own
// quota, what its tenants that are not dispatched lend (their quota, or
// their lending limit), and what its sub-departments with no dispatched
// tenant lend up (their subtree, capped by their lending limit). The
// dispatched tenants' own sums are their ClusterQueues' (sumDispatched);
// a sub-department that holds one is on the manager with its own sum.

// sumDepartments rewrites the quota, in manager's flavor pools, of every
// department of manager that holds a dispatched tenant, from workers (the
// members' configurations by name). Summing again gives the same result.
func sumDepartments(manager *Config, workers map[string]*Config) {
	flavor := map[string]*Pool{}
	for _, p := range manager.FlavorPools {
		flavor[p.Name] = p
	}
	if len(flavor) == 0 {
		return
	}
	for _, d := range manager.Departments {
		d.Quotas = slices.DeleteFunc(d.Quotas, func(q *Quota) bool { return flavor[q.PoolName] != nil })
		var shares []map[string]*Quota // one per worker: pool -> what d shares there
		for _, name := range departmentWorkers(manager, d) {
			if w := workers[name]; w != nil {
				shares = append(shares, sharedOn(w, d.Name))
			}
		}
		for _, p := range manager.FlavorPools {
			var blocks []*Quota
			for _, s := range shares {
				if q := s[p.Name]; q != nil {
					blocks = append(blocks, q)
				}
			}
			if len(blocks) == 0 {
				continue
			}
			sum := &Quota{Meta: blocks[0].Meta, PoolName: p.Name, Pool: p}
			// A limit left out on one worker is left out here: unbounded
			// there, so unbounded in the sum.
			addBlocks(sum, blocks, false)
			d.Quotas = append(d.Quotas, sum)
		}
	}
}

// departmentWorkers lists, in fleet order, the workers of the tenants of
// manager dispatched by MultiKueue that are under department d.
func departmentWorkers(manager *Config, d *Department) []string {
	return workersOf(manager, func(t *Tenant) bool { return under(t.Department, d.Name) })
}

// under reports whether department d is the department named name or
// below it.
func under(d *Department, name string) bool {
	for ; d != nil; d = d.Parent {
		if d.Name == name {
			return true
		}
	}
	return false
}

// sharedOn is, by pool, what department name shares on worker w with its
// dispatched tenants there: its own quota blocks (with their limits) plus
// what its members that are not on the manager lend. Nil when w does not
// hold the department.
func sharedOn(w *Config, name string) map[string]*Quota {
	var d *Department
	for _, wd := range w.Departments {
		if wd.Name == name {
			d = wd
		}
	}
	if d == nil {
		return nil
	}
	out := map[string]*Quota{}
	block := func(pool string, meta Meta) *Quota {
		if out[pool] == nil {
			out[pool] = &Quota{Meta: meta, PoolName: pool}
		}
		return out[pool]
	}
	for _, q := range d.Quotas {
		b := block(q.PoolName, q.Meta)
		b.GPUs, b.Slices = q.GPUs, maps.Clone(q.Slices)
		b.BorrowingLimit, b.LendingLimit = q.BorrowingLimit, q.LendingLimit
	}
	for pool, lent := range lentByAbsent(w, d) {
		b := block(pool, d.Meta)
		b.GPUs += lent["gpus"]
		delete(lent, "gpus")
		b.Slices = addCounts(b.Slices, lent)
	}
	return out
}

// lentByAbsent is, by pool and key ("gpus" or a MIG profile), what the
// members of department d on worker w that are not on the manager lend
// it: its tenants that are not dispatched, and its sub-departments with no
// dispatched tenant (all they lend up).
func lentByAbsent(w *Config, d *Department) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, t := range w.Tenants {
		if t.Department == d && t.Dispatch != DispatchMultiKueue {
			addLendable(out, t.Quotas)
		}
	}
	for _, c := range w.Departments {
		if c.Parent == d && !holdsDispatched(w, c) {
			for pool, counts := range lendsUp(w, c) {
				addPool(out, pool, counts)
			}
		}
	}
	return out
}

// lendsUp is what department d's subtree on w lends its parent, by pool
// and key: its own quota, its tenants' lendable quota and its
// sub-departments' lending, capped by d's lending limits.
func lendsUp(w *Config, d *Department) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, q := range d.Quotas {
		addPool(out, q.PoolName, nominalCounts(q))
	}
	for _, t := range w.Tenants {
		if t.Department == d {
			addLendable(out, t.Quotas)
		}
	}
	for _, c := range w.Departments {
		if c.Parent == d {
			for pool, counts := range lendsUp(w, c) {
				addPool(out, pool, counts)
			}
		}
	}
	for _, q := range d.Quotas {
		for k, l := range q.LendingLimit {
			if out[q.PoolName][k] > l {
				out[q.PoolName][k] = l
			}
		}
	}
	return out
}

// holdsDispatched reports whether a tenant of w dispatched by MultiKueue
// is under department d.
func holdsDispatched(w *Config, d *Department) bool {
	for _, t := range w.Tenants {
		if t.Dispatch == DispatchMultiKueue && under(t.Department, d.Name) {
			return true
		}
	}
	return false
}

// addLendable adds what quota blocks lend: by key, the lending limit when
// set, else the whole nominal quota.
func addLendable(out map[string]map[string]int, quotas []*Quota) {
	for _, q := range quotas {
		lent := nominalCounts(q)
		for k, n := range lent {
			if l, ok := q.LendingLimit[k]; ok && l < n {
				lent[k] = l
			}
		}
		addPool(out, q.PoolName, lent)
	}
}

// nominalCounts is q's nominal quota by key: "gpus" and each MIG profile.
func nominalCounts(q *Quota) map[string]int {
	out := maps.Clone(q.Slices)
	if out == nil {
		out = map[string]int{}
	}
	if q.GPUs != 0 {
		out["gpus"] = q.GPUs
	}
	return out
}

// addPool adds counts, by key, to out's entry for pool; an empty counts
// adds no entry.
func addPool(out map[string]map[string]int, pool string, counts map[string]int) {
	if len(counts) > 0 {
		out[pool] = addCounts(out[pool], counts)
	}
}
