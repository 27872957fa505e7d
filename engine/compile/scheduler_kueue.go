package compile

import (
	"cmp"
	"iter"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// kueue is scheduler "kueue": a WorkloadPriorityClass per priority, a
// ResourceFlavor per pool and one for cpu, memory and pods on any node, a
// ClusterQueue (in the tenant's cohort, one flavor per quota block, the
// tenant's cpu, memory and pods, preemption from its priorities) and a
// LocalQueue per tenant, and models labelled with their queue and priority
// so that Kueue admits them.
type kueue struct {
	noScheduler
	stack string
	// preempting is set once a priority of the stack preempts: the
	// priorities a tenant that lists none may use.
	preempting bool
	// lendable is what each cohort's tenants may lend, by cohort, pool and
	// resource (made by the first ResourceQuota call).
	lendable map[string]map[string]capacity.Counts
	// tree is what the organisation tree lets departments' members borrow
	// (made by the first ResourceQuota call for one; orgtree.go).
	tree *orgTree
}

func newKueue(s *config.Settings) Scheduler { return &kueue{stack: s.Stack} }

// Arguments: a tenant's cohort and its quota blocks' borrowing and lending
// limits become fields of its ClusterQueue.
func (*kueue) Arguments() []string {
	return []string{"tenant.cohort", "tenant.quota.borrowing_limit", "tenant.quota.lending_limit"}
}

// Stand-ins for "no limit" where a tenant sets no cpu or memory: Kueue
// admits a workload only when its ClusterQueue covers every resource the
// workload requests (and every pod requests cpu and memory), and a quota
// cannot be unlimited. A million cores and a pebibyte per tenant stay far
// from int64 overflow when Kueue sums a cohort of thousands of tenants.
const (
	unboundedCPU    = "1000000"
	unboundedMemory = "1Pi"
)

// AnyNodeFlavor is the name of the stack's ResourceFlavor of cpu, memory
// and pods: no node labels, so any node (the GPU flavor of the same
// workload still pins it to its pool). Pool names are DNS labels, so the
// dot keeps it from ever naming a pool's flavor.
func AnyNodeFlavor(stack string) string { return stack + ".any-node" }

// Priority is the WorkloadPriorityClass Kueue orders workloads by.
func (k *kueue) Priority(p *config.Priority) []*engine.Object {
	k.preempting = k.preempting || p.Preemption == config.PreemptLowerPriority
	wpc := newObject(engine.KindWorkloadPrio, "", p.Name, k.stack, p.Address)
	wpc.Object["value"] = p.Value
	if p.Description != "" {
		wpc.Object["description"] = p.Description
	}
	return []*engine.Object{{Object: wpc, Sensitive: anySensitive(&p.Meta)}}
}

// Pool is the ResourceFlavor of the pool's nodes, with their taints.
func (k *kueue) Pool(p *config.Pool) []*engine.Object {
	rf := newObject(engine.KindResourceFlavor, "", p.Name, k.stack, p.Address)
	spec := map[string]any{"nodeLabels": map[string]any{engine.LabelPool: p.Name}}
	if len(p.Taints) > 0 {
		// Kueue admits a workload on the flavor only when its pods
		// tolerate nodeTaints (or the flavor's tolerations, which it adds
		// to the pods it admits): quota on the pool is what gives access.
		spec["nodeTaints"], spec["tolerations"] = taints(p), tolerations(p)
	}
	rf.Object["spec"] = spec
	return []*engine.Object{{Object: rf, Sensitive: anySensitive(&p.Meta)}}
}

// ResourceQuota returns what the tenant's GPU limits rise by, as Kueue
// lets it borrow: in each pool it has quota for, per resource it covers, the
// smaller of its borrowing limit and what it can reach beyond what it lends
// itself: what the cohort's other tenants may lend there (their lending
// limits, else their nominal quota), or in a department what the
// department's tree lets it reach (orgTree.reach). Otherwise the
// ResourceQuota, which the API server checks when a Job's pods are
// created, refuses the pods of every workload Kueue admitted by borrowing.
// cpu, memory and pods have borrowing limit 0 and stay as they are.
func (k *kueue) ResourceQuota(quotas *capacity.Quotas, t *config.Tenant) capacity.Counts {
	var reach poolCounts
	switch {
	case t.Cohort == "":
		return nil
	case t.Department != nil:
		if k.tree == nil {
			k.tree = newOrgTree(quotas)
		}
		reach = k.tree.reach(t.Department)
	default:
		if k.lendable == nil {
			k.lendable = cohortLendable(quotas)
		}
		reach = k.lendable[t.Cohort]
	}
	extra := capacity.Counts{}
	for r, n := range borrowBeyond(quotas.Of(t), reach) {
		extra[capacity.QuotaKey(r)] = n
	}
	return extra
}

// cohortLendable sums what the tenants of each cohort may lend, by
// cohort, pool and resource.
func cohortLendable(quotas *capacity.Quotas) map[string]map[string]capacity.Counts {
	out := map[string]map[string]capacity.Counts{}
	for _, tq := range quotas.Tenants {
		cohort := tq.Tenant.Cohort
		if cohort == "" {
			continue
		}
		if out[cohort] == nil {
			out[cohort] = map[string]capacity.Counts{}
		}
		for _, b := range tq.Blocks {
			if out[cohort][b.Pool] == nil {
				out[cohort][b.Pool] = capacity.Counts{}
			}
			out[cohort][b.Pool].Add(lendableOf(b))
		}
	}
	return out
}

// lendableOf is what quota block b lends its cohort: its nominal quota,
// capped by its lending limits (a new map: b's is never written).
func lendableOf(b capacity.BlockQuota) capacity.Counts {
	res := maps.Clone(b.Nominal)
	for r, l := range b.Limits(b.Block.LendingLimit) {
		if n, ok := res[r]; ok && l < n {
			res[r] = l
		}
	}
	return res
}

// Applied reads the ClusterQueues' nominal quotas, and the departments'
// Cohorts', which the pool's capacity counts as it counts the tenants':
// under Kueue a tenant's ResourceQuota also allows what it may borrow in
// its cohort.
func (k *kueue) Applied(objs iter.Seq[*unstructured.Unstructured]) (capacity.Counts, bool) {
	out, ok := appliedOf(objs, engine.KindClusterQueue, readNominalQuotas)
	if ok {
		cohorts, _ := appliedOf(objs, engine.KindCohort, readNominalQuotas)
		out.Add(cohorts)
	}
	return out, ok
}

// readNominalQuotas reads the nominal quota of every resource of every
// flavor of a ClusterQueue's or Cohort's resource groups.
func readNominalQuotas(obj map[string]any, add func(string, string)) {
	for _, g := range listAt(obj, "spec", "resourceGroups") {
		for _, f := range listAt(g, "flavors") {
			for _, r := range listAt(f, "resources") {
				m, _ := r.(map[string]any)
				name, _ := m["name"].(string)
				quota, _ := m["nominalQuota"].(string)
				add(name, quota)
			}
		}
	}
}

// Objects is the ResourceFlavor of cpu, memory and pods, when there are
// tenants (their ClusterQueues cover those resources with it).
func (k *kueue) Objects(cfg *config.Config) []*engine.Object {
	if len(cfg.Tenants) == 0 {
		return nil
	}
	rf := newObject(engine.KindResourceFlavor, "", AnyNodeFlavor(k.stack), k.stack, engine.StackAddress)
	rf.Object["spec"] = map[string]any{}
	return []*engine.Object{{Object: rf}}
}

// Tenant is the tenant's ClusterQueue, named after its namespace, and the
// LocalQueue its models are submitted to.
func (k *kueue) Tenant(t *config.Tenant, quota *capacity.TenantQuota) []*engine.Object {
	ns := t.Namespace
	cq := newObject(engine.KindClusterQueue, "", ns, k.stack, t.Address)
	spec := clusterQueueSpec(t, quota)
	groups, _ := spec["resourceGroups"].([]any)
	spec["resourceGroups"] = append(groups, nodeResourceGroup(t, AnyNodeFlavor(k.stack)))
	spec["preemption"] = k.preemption(t)
	cq.Object["spec"] = spec
	deps := []engine.Key{engine.KeyFor(engine.KindResourceFlavor, "", AnyNodeFlavor(k.stack))}
	for _, q := range t.Quotas {
		deps = append(deps, engine.KeyFor(engine.KindResourceFlavor, "", q.PoolName))
	}
	if t.Department != nil {
		deps = append(deps, engine.KeyFor(engine.KindCohort, "", t.Cohort))
	}
	lq := newObject(engine.KindLocalQueue, ns, engine.LocalQueueName, k.stack, t.Address)
	lq.Object["spec"] = map[string]any{"clusterQueue": ns}
	return []*engine.Object{
		{Object: cq, DependsOn: deps, Sensitive: tenantSensitive(t)},
		{Object: lq, DependsOn: []engine.Key{engine.KeyFor(engine.KindNamespace, "", ns), engine.KeyFor(engine.KindClusterQueue, "", ns)}, Sensitive: tenantSensitive(t)},
	}
}

// clusterQueueSpec is one resource group covering every resource the
// tenant has quota for, with one flavor per quota block.
func clusterQueueSpec(t *config.Tenant, quota *capacity.TenantQuota) map[string]any {
	resources := quota.Covered()
	var flavors []any
	for _, b := range quota.Blocks {
		flavors = append(flavors, map[string]any{"name": b.Pool, "resources": flavorResources(b, resources)})
	}
	spec := map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": t.Namespace}},
	}
	// No cohort is no cohortName: Kueue's CRD refuses an empty one (its
	// pattern needs a DNS-1123 subdomain).
	if t.Cohort != "" {
		spec["cohortName"] = t.Cohort
	}
	if len(flavors) > 0 {
		cov := make([]any, len(resources))
		for i, r := range resources {
			cov[i] = r
		}
		spec["resourceGroups"] = []any{map[string]any{"coveredResources": cov, "flavors": flavors}}
	}
	return spec
}

// nodeResourceGroup is the resource group of cpu and memory (and pods
// when the tenant limits them) with the tenant's limits as nominal quota
// in flavor, the stack's any-node ResourceFlavor. Every workload requests
// cpu and memory, so they are always covered (without the tenant's
// attribute, with unboundedCPU and unboundedMemory); Kueue counts pods
// only when covered. In a cohort the borrowing limit is 0: like the
// ResourceQuota, the tenant's cpu, memory and pods are a hard limit.
func nodeResourceGroup(t *config.Tenant, flavor string) map[string]any {
	type entry struct{ name, quota string }
	entries := []entry{{"cpu", cmp.Or(t.CPU, unboundedCPU)}, {"memory", cmp.Or(t.Memory, unboundedMemory)}}
	if t.HasAttr("pods") {
		entries = append(entries, entry{"pods", strconv.Itoa(t.Pods)})
	}
	covered := make([]any, len(entries))
	resources := make([]any, len(entries))
	for i, e := range entries {
		covered[i] = e.name
		if t.Cohort != "" {
			resources[i] = pairs("name", e.name, "nominalQuota", e.quota, "borrowingLimit", "0")
		} else {
			resources[i] = pairs("name", e.name, "nominalQuota", e.quota)
		}
	}
	return map[string]any{"coveredResources": covered, "flavors": []any{map[string]any{"name": flavor, "resources": resources}}}
}

// preemption is the ClusterQueue's spec.preemption, from the priorities
// the tenant's workloads may use (its priorities, else every priority of
// the stack): when one of them preempts (PreemptLowerPriority), a pending
// workload may preempt lower-priority workloads of its own ClusterQueue
// and reclaim its nominal quota from lower-priority workloads borrowing it
// in the cohort; when none does (all Never, or no priorities), it waits.
// Kueue decides this per ClusterQueue, not per priority. A workload never
// preempts another tenant's workloads to borrow (borrowWithinCohort
// Never): a tenant's nominal quota stays its own.
func (k *kueue) preemption(t *config.Tenant) map[string]any {
	preempting := k.preempting
	if len(t.Priorities) > 0 {
		preempting = false
		for _, p := range t.Priorities {
			preempting = preempting || p.Preemption == config.PreemptLowerPriority
		}
	}
	policy, reclaim := "Never", "Never"
	if preempting {
		policy, reclaim = "LowerPriority", "LowerPriority"
	}
	return map[string]any{
		"withinClusterQueue":  policy,
		"reclaimWithinCohort": reclaim,
		"borrowWithinCohort":  map[string]any{"policy": "Never"},
	}
}

// flavorResources is the nominal quota of each covered resource in quota
// block b's flavor, with its borrowing and lending limits.
func flavorResources(b capacity.BlockQuota, covered []string) []any {
	borrow, lend := b.Limits(b.Block.BorrowingLimit), b.Limits(b.Block.LendingLimit)
	var rs []any
	for _, r := range covered {
		var kv [8]string
		e := append(kv[:0], "name", r, "nominalQuota", strconv.FormatInt(b.Nominal[r], 10))
		if v, ok := borrow[r]; ok {
			e = append(e, "borrowingLimit", strconv.FormatInt(v, 10))
		}
		if v, ok := lend[r]; ok {
			e = append(e, "lendingLimit", strconv.FormatInt(v, 10))
		}
		rs = append(rs, pairs(e...))
	}
	return rs
}

// Model labels the model with its LocalQueue and priority, which Kueue
// reads, and makes it wait for both.
func (*kueue) Model(w *Workload) {
	w.Labels["kueue.x-k8s.io/queue-name"] = engine.LocalQueueName
	w.DependsOn = append(w.DependsOn, engine.KeyFor(engine.KindLocalQueue, w.Namespace, engine.LocalQueueName))
	if w.Priority != nil {
		w.Labels["kueue.x-k8s.io/priority-class"] = w.Priority.Name
		w.DependsOn = append(w.DependsOn, engine.KeyFor(engine.KindWorkloadPrio, "", w.Priority.Name))
	}
}
