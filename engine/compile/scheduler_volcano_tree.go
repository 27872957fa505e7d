package compile

import (
	"iter"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// The organisation tree under Volcano: hierarchical Queues (spec.parent),
// enforced by Volcano's capacity plugin in hierarchical mode. Each
// department is a Queue under its parent's (a top-level one under root);
// each tenant of a department a leaf Queue under it (Volcano schedules
// jobs from leaf Queues only). Volcano bounds a child by its ancestors'
// capability and shares what a Queue leaves idle up to each Queue's
// capability, reclaiming it back for the Queues under their deserved.

// volcanoRoot is the Queue Volcano makes at the top of every hierarchy.
const volcanoRoot = "root"

// volcanoQueueName is department d's Queue: the stack's name and the
// department's, so that it does not take a tenant's namespace (a tenant's
// Queue is named after it; volcanoDepartments refuses a clash).
func volcanoQueueName(stack string, d *config.Department) string {
	return stack + "-" + d.Name
}

// Department is department d's Queue: its parent department's Queue as
// spec.parent (root at the top), deserving its subtree's quotas
// (volcanoDeserved), capped where it may borrow only so much
// (volcanoCapability). It holds no job, so neither weight (left at the
// CRD's default) nor reclaimable matters.
func (v *volcano) Department(tree *orgTree, d *config.Department, _ *capacity.DepartmentQuota) []*engine.Object {
	v.tree = tree
	q := newObject(engine.KindVolcanoQueue, "", volcanoQueueName(v.stack, d), v.stack, d.Address)
	spec := map[string]any{"parent": volcanoRoot, "weight": int64(1)}
	var deps []engine.Key
	if d.Parent != nil {
		parent := volcanoQueueName(v.stack, d.Parent)
		spec["parent"] = parent
		deps = append(deps, engine.KeyFor(engine.KindVolcanoQueue, "", parent))
	}
	if des := tree.volcanoDeserved(d); len(des) > 0 {
		spec["deserved"] = quantities(des)
	}
	if c := tree.volcanoCapability(d); len(c) > 0 {
		spec["capability"] = quantities(c)
	}
	q.Object["spec"] = spec
	return []*engine.Object{{Object: q, DependsOn: deps, Sensitive: departmentSensitive(d)}}
}

// ResourceQuota returns what a department tenant's GPU limits rise by:
// what the tree lets it reach beyond its quota, as its Queue's
// capability, so that the pods Volcano schedules by borrowing are not
// refused by the namespace's quota. A tenant outside the tree borrows
// nothing.
func (v *volcano) ResourceQuota(quotas *capacity.Quotas, t *config.Tenant) capacity.Counts {
	if t.Department == nil {
		return nil
	}
	if v.tree == nil {
		v.tree = newOrgTree(quotas)
	}
	extra := capacity.Counts{}
	for r, n := range borrowBeyond(quotas.Of(t), v.tree.reach(t.Department)) {
		extra[capacity.QuotaKey(r)] = n
	}
	return extra
}

// volcanoDeserved is what department d's Queue deserves, by resource: its
// own quota and everything under it (its tenants' and sub-departments'),
// so that its children's deserved never exceed its own (Volcano's
// webhook refuses that). Volcano counts a resource across pools.
func (t *orgTree) volcanoDeserved(d *config.Department) capacity.Counts {
	out := capacity.Counts{}
	for _, b := range t.quotas.OfDepartment(d).Blocks {
		out.Add(b.Nominal)
	}
	for _, tq := range t.members[d] {
		out.Add(tq.Total())
	}
	for _, c := range t.children[d] {
		out.Add(t.volcanoDeserved(c))
	}
	return out
}

// volcanoCapability is department d's Queue's capability, by resource: at
// the top of a tree its deserved (top-level trees share nothing, as under
// Kueue); below, deserved plus its borrowing limits on the resources it
// limits, and nothing elsewhere (Volcano then caps it at its parent's).
func (t *orgTree) volcanoCapability(d *config.Department) capacity.Counts {
	des := t.volcanoDeserved(d)
	if d.Parent == nil {
		return des
	}
	out := capacity.Counts{}
	for _, b := range t.quotas.OfDepartment(d).Blocks {
		out.Add(b.Limits(b.Block.BorrowingLimit))
	}
	for r := range out {
		out[r] += des[r]
	}
	return out
}

// quantities is counts as a Queue's resource list.
func quantities(c capacity.Counts) map[string]any {
	out := make(map[string]any, len(c))
	for r, n := range c {
		out[r] = strconv.FormatInt(n, 10)
	}
	return out
}

// Applied reads the Queues at the top of the stack's: a tenant's outside
// the tree by its capability (its quota), a top-level department's by its
// deserved (its whole tree's quotas); a department tenant's ResourceQuota
// also allows what it may borrow, so the ResourceQuotas count only where
// no Queue was applied yet.
func (*volcano) Applied(objs iter.Seq[*unstructured.Unstructured]) (capacity.Counts, bool) {
	return appliedOf(objs, engine.KindVolcanoQueue, func(obj map[string]any, add func(string, string)) {
		if parent, _, _ := unstructured.NestedString(obj, "spec", "parent"); parent != "" && parent != volcanoRoot {
			return
		}
		field := "capability"
		if _, ok, _ := unstructured.NestedFieldNoCopy(obj, "spec", "deserved"); ok {
			field = "deserved"
		}
		m, _, _ := unstructured.NestedMap(obj, "spec", field)
		for r, v := range m {
			if q, ok := v.(string); ok {
				add(r, q)
			}
		}
	})
}
