package compile

import (
	"strconv"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// The organisation tree: department blocks, which group tenants and other
// departments, each with quotas of its own that everything under it
// shares. A scheduler that can express it implements treeScheduler; under
// any other the departments are a validation error (validate_orgtree.go).

// treeScheduler is a Scheduler that expresses a department's shared quota.
type treeScheduler interface {
	// Department returns the scheduler's objects for department d, whose
	// own quota is quota, in the stack's tree (Kueue: a Cohort; Volcano: a
	// Queue with a parent).
	Department(tree *orgTree, d *config.Department, quota *capacity.DepartmentQuota) []*engine.Object
}

// departments compiles every department with the stack's scheduler.
func (c *compiler) departments() {
	ts, ok := c.sched.(treeScheduler)
	if !ok {
		return // Validate refuses departments under this scheduler
	}
	tree := newOrgTree(c.quotas)
	for _, dq := range c.quotas.Departments {
		c.add(dq.Department.Address, ts.Department(tree, dq.Department, dq)...)
	}
}

// Department is the department's Cohort, named after it: its parent's
// Cohort as parentName, its own quota blocks as one resource group (a
// flavor per pool, with borrowing and lending limits towards its parent)
// and its fair-sharing weight when set. The tenants of the department
// have its name as their ClusterQueues' cohortName.
func (k *kueue) Department(_ *orgTree, d *config.Department, quota *capacity.DepartmentQuota) []*engine.Object {
	co := newObject(engine.KindCohort, "", d.Name, k.stack, d.Address)
	spec := map[string]any{}
	var deps []engine.Key
	if d.Parent != nil {
		spec["parentName"] = d.Parent.Name
		deps = append(deps, engine.KeyFor(engine.KindCohort, "", d.Parent.Name))
	}
	if covered := quota.Covered(); len(covered) > 0 {
		cov := make([]any, len(covered))
		for i, r := range covered {
			cov[i] = r
		}
		var flavors []any
		for _, b := range quota.Blocks {
			flavors = append(flavors, map[string]any{"name": b.Pool, "resources": flavorResources(b, covered)})
			deps = append(deps, engine.KeyFor(engine.KindResourceFlavor, "", b.Pool))
		}
		spec["resourceGroups"] = []any{map[string]any{"coveredResources": cov, "flavors": flavors}}
	}
	if d.HasWeight {
		spec["fairSharing"] = map[string]any{"weight": strconv.FormatFloat(d.Weight, 'f', -1, 64)}
	}
	co.Object["spec"] = spec
	return []*engine.Object{{Object: co, DependsOn: deps, Sensitive: departmentSensitive(d)}}
}

// departmentSensitive reports whether a department or any of its quota
// blocks holds a value of a sensitive variable.
func departmentSensitive(d *config.Department) bool {
	if anySensitive(&d.Meta) {
		return true
	}
	for _, q := range d.Quotas {
		if anySensitive(&q.Meta) {
			return true
		}
	}
	return false
}

// poolCounts are counts by pool and resource.
type poolCounts map[string]capacity.Counts

// add adds n of resource r on pool.
func (pc poolCounts) add(pool, r string, n int64) {
	if pc[pool] == nil {
		pc[pool] = capacity.Counts{}
	}
	pc[pool][r] += n
}

// addAll adds every count of o.
func (pc poolCounts) addAll(o poolCounts) {
	for pool, c := range o {
		for r, n := range c {
			pc.add(pool, r, n)
		}
	}
}

// orgTree is what Kueue lets the members of each department borrow,
// computed once per compilation from the one quota value.
type orgTree struct {
	quotas   *capacity.Quotas
	children map[*config.Department][]*config.Department
	members  map[*config.Department][]*capacity.TenantQuota
	subtree  map[*config.Department]poolCounts
}

func newOrgTree(quotas *capacity.Quotas) *orgTree {
	t := &orgTree{quotas: quotas, children: map[*config.Department][]*config.Department{},
		members: map[*config.Department][]*capacity.TenantQuota{}, subtree: map[*config.Department]poolCounts{}}
	for _, dq := range quotas.Departments {
		if p := dq.Department.Parent; p != nil {
			t.children[p] = append(t.children[p], dq.Department)
		}
	}
	for _, tq := range quotas.Tenants {
		if d := tq.Tenant.Department; d != nil {
			t.members[d] = append(t.members[d], tq)
		}
	}
	return t
}

// sub is what department d's subtree holds for its members to share:
// its own quota, what its tenants lend (lendableOf) and what its
// sub-departments lend up (lendUp).
func (t *orgTree) sub(d *config.Department) poolCounts {
	if pc, ok := t.subtree[d]; ok {
		return pc
	}
	pc := poolCounts{}
	for _, b := range t.quotas.OfDepartment(d).Blocks {
		for r, n := range b.Nominal {
			pc.add(b.Pool, r, n)
		}
	}
	for _, tq := range t.members[d] {
		for _, b := range tq.Blocks {
			for r, n := range lendableOf(b) {
				pc.add(b.Pool, r, n)
			}
		}
	}
	for _, c := range t.children[d] {
		pc.addAll(t.lendUp(c))
	}
	t.subtree[d] = pc
	return pc
}

// lendUp is what department d's subtree lends its parent: all it holds,
// capped by d's lending limits (Kueue's Cohort lendingLimit).
func (t *orgTree) lendUp(d *config.Department) poolCounts {
	return t.capped(d, t.sub(d), func(q *config.Quota) map[string]int { return q.LendingLimit })
}

// above is what department d's members may borrow from outside d: the
// rest of its parent's subtree, and what the parent may borrow above it,
// capped by the parent's borrowing limits; nothing at the top of the tree.
func (t *orgTree) above(d *config.Department) poolCounts {
	p := d.Parent
	if p == nil {
		return poolCounts{}
	}
	out := poolCounts{}
	out.addAll(t.sub(p))
	for pool, c := range t.lendUp(d) {
		for r, n := range c {
			out.add(pool, r, -n)
		}
	}
	out.addAll(t.capped(p, t.above(p), func(q *config.Quota) map[string]int { return q.BorrowingLimit }))
	return out
}

// reach is everything the members of department d may use: its subtree
// and what it may borrow above it (capped by its borrowing limits).
func (t *orgTree) reach(d *config.Department) poolCounts {
	out := poolCounts{}
	out.addAll(t.sub(d))
	out.addAll(t.capped(d, t.above(d), func(q *config.Quota) map[string]int { return q.BorrowingLimit }))
	return out
}

// borrowBeyond is what tenant tq may use beyond its own quota, by
// resource, when reach (by pool) is everything it can reach: in each pool
// it has quota for, per resource it covers, the smaller of its borrowing
// limit and reach less what it lends itself (lendableOf).
func borrowBeyond(tq *capacity.TenantQuota, reach poolCounts) capacity.Counts {
	covered := tq.Covered()
	extra := capacity.Counts{}
	for _, b := range tq.Blocks {
		own := lendableOf(b)
		borrow := b.Limits(b.Block.BorrowingLimit)
		for _, r := range covered {
			n := reach[b.Pool][r] - own[r]
			if l, ok := borrow[r]; ok && l < n {
				n = l
			}
			if n > 0 {
				extra[r] += n
			}
		}
	}
	return extra
}

// capped is pc with each count capped by department d's limits on its
// pool (limits picks borrowing or lending); no limit where d's quota
// block on the pool sets none, or where d has no block on the pool.
func (t *orgTree) capped(d *config.Department, pc poolCounts, limits func(*config.Quota) map[string]int) poolCounts {
	out := poolCounts{}
	for pool, c := range pc {
		var caps capacity.Counts
		for _, b := range t.quotas.OfDepartment(d).Blocks {
			if b.Pool == pool {
				caps = b.Limits(limits(b.Block))
			}
		}
		for r, n := range c {
			if l, ok := caps[r]; ok && l < n {
				n = l
			}
			out.add(pool, r, max(n, 0))
		}
	}
	return out
}
