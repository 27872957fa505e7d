package compile

import (
	"strconv"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// kueue is scheduler "kueue": a WorkloadPriorityClass per priority, a
// ResourceFlavor per pool, a ClusterQueue (in the tenant's cohort, one
// flavor per quota block) and a LocalQueue per tenant, and models labelled
// with their queue and priority so that Kueue admits them.
type kueue struct {
	noScheduler
	stack string
}

func newKueue(s *config.Settings) Scheduler { return kueue{stack: s.Stack} }

// Priority is the WorkloadPriorityClass Kueue orders workloads by.
func (k kueue) Priority(p *config.Priority) []*engine.Object {
	wpc := newObject("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", "", p.Name, k.stack, p.Address)
	wpc.Object["value"] = p.Value
	if p.Description != "" {
		wpc.Object["description"] = p.Description
	}
	return []*engine.Object{{Object: wpc, Sensitive: anySensitive(&p.Meta)}}
}

// Pool is the ResourceFlavor of the pool's nodes.
func (k kueue) Pool(p *config.Pool) []*engine.Object {
	rf := newObject("kueue.x-k8s.io/v1beta2", "ResourceFlavor", "", p.Name, k.stack, p.Address)
	rf.Object["spec"] = map[string]any{"nodeLabels": map[string]any{engine.LabelPool: p.Name}}
	return []*engine.Object{{Object: rf, Sensitive: anySensitive(&p.Meta)}}
}

// Tenant is the tenant's ClusterQueue, named after its namespace, and the
// LocalQueue its models are submitted to.
func (k kueue) Tenant(t *config.Tenant, quota PoolResources) []*engine.Object {
	ns := t.Namespace
	cq := newObject("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", ns, k.stack, t.Address)
	cq.Object["spec"] = clusterQueueSpec(t, quota)
	var deps []engine.Key
	for _, q := range t.Quotas {
		deps = append(deps, engine.Key{Group: "kueue.x-k8s.io", Kind: "ResourceFlavor", Name: q.PoolName})
	}
	lq := newObject("kueue.x-k8s.io/v1beta2", "LocalQueue", ns, engine.LocalQueueName, k.stack, t.Address)
	lq.Object["spec"] = map[string]any{"clusterQueue": ns}
	return []*engine.Object{
		{Object: cq, DependsOn: deps, Sensitive: tenantSensitive(t)},
		{Object: lq, DependsOn: []engine.Key{{Kind: "Namespace", Name: ns}, {Group: "kueue.x-k8s.io", Kind: "ClusterQueue", Name: ns}}, Sensitive: tenantSensitive(t)},
	}
}

// clusterQueueSpec is one resource group covering every resource the
// tenant has quota for, with one flavor per quota block.
func clusterQueueSpec(t *config.Tenant, quota PoolResources) map[string]any {
	covered := map[string]bool{}
	for _, res := range quota {
		for r := range res {
			covered[r] = true
		}
	}
	resources := sortedStrings(covered)
	var flavors []any
	for _, q := range t.Quotas {
		flavors = append(flavors, map[string]any{"name": q.PoolName, "resources": flavorResources(q, quota[q.PoolName], resources)})
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

// flavorResources is the nominal quota of each covered resource in one
// quota block's flavor, with its borrowing and lending limits.
func flavorResources(q *config.Quota, res map[string]int64, covered []string) []any {
	borrow, lend := map[string]int64{}, map[string]int64{}
	for k, v := range q.BorrowingLimit {
		borrow[limitResource(k)] = int64(v)
	}
	for k, v := range q.LendingLimit {
		lend[limitResource(k)] = int64(v)
	}
	var rs []any
	for _, r := range covered {
		e := map[string]any{"name": r, "nominalQuota": strconv.FormatInt(res[r], 10)}
		if v, ok := borrow[r]; ok {
			e["borrowingLimit"] = strconv.FormatInt(v, 10)
		}
		if v, ok := lend[r]; ok {
			e["lendingLimit"] = strconv.FormatInt(v, 10)
		}
		rs = append(rs, e)
	}
	return rs
}

// limitResource maps a borrowing/lending limit key (a profile or "gpus") to its resource.
func limitResource(key string) string {
	if key == "gpus" {
		return engine.ResourceGPU
	}
	return engine.MIGResource(key)
}

// Model labels the model with its LocalQueue and priority, which Kueue
// reads, and makes it wait for both.
func (kueue) Model(w *Workload) {
	w.Labels["kueue.x-k8s.io/queue-name"] = engine.LocalQueueName
	w.DependsOn = append(w.DependsOn, engine.Key{Group: "kueue.x-k8s.io", Kind: "LocalQueue", Namespace: w.Namespace, Name: engine.LocalQueueName})
	if w.Priority != nil {
		w.Labels["kueue.x-k8s.io/priority-class"] = w.Priority.Name
		w.DependsOn = append(w.DependsOn, engine.Key{Group: "kueue.x-k8s.io", Kind: "WorkloadPriorityClass", Name: w.Priority.Name})
	}
}
