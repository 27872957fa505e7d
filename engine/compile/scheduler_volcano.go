package compile

import (
	"strconv"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// volcano is scheduler "volcano": a Queue per tenant whose capability is
// the sum of its quotas (and its cpu and memory), with its weight and
// whether others may reclaim from it; a Queue per department, the
// parent of its tenants' and sub-departments' Queues
// (scheduler_volcano_tree.go).
type volcano struct {
	noScheduler
	stack string
	// tree is the stack's organisation tree: handed over by Department
	// (departments compile before tenants) or made by ResourceQuota.
	tree *orgTree
}

func newVolcano(s *config.Settings) Scheduler { return &volcano{stack: s.Stack} }

// Arguments: a tenant's weight and reclaimable become fields of its Queue.
func (*volcano) Arguments() []string { return []string{"tenant.weight", "tenant.reclaimable"} }

// Tenant is the tenant's Queue, named after its namespace. In a
// department it is a leaf of the department's Queue: it deserves its
// quota and its capability is what the tree lets it reach (volcanoLeaf).
func (v *volcano) Tenant(t *config.Tenant, quota *capacity.TenantQuota) []*engine.Object {
	capability := map[string]any{}
	limit := quota.Total()
	if t.Department != nil && v.tree != nil {
		limit.Add(borrowBeyond(quota, v.tree.reach(t.Department)))
	}
	for r, n := range limit {
		capability[r] = strconv.FormatInt(n, 10)
	}
	if t.CPU != "" {
		capability["cpu"] = t.CPU
	}
	if t.Memory != "" {
		capability["memory"] = t.Memory
	}
	q := newObject(engine.KindVolcanoQueue, "", t.Namespace, v.stack, t.Address)
	spec := map[string]any{"weight": int64(t.Weight), "reclaimable": t.Reclaimable}
	if len(capability) > 0 {
		spec["capability"] = capability
	}
	var deps []engine.Key
	if d := t.Department; d != nil {
		parent := volcanoQueueName(v.stack, d)
		spec["parent"] = parent
		if des := quota.Total(); len(des) > 0 {
			spec["deserved"] = quantities(des)
		}
		deps = append(deps, engine.KeyFor(engine.KindVolcanoQueue, "", parent))
	}
	q.Object["spec"] = spec
	return []*engine.Object{{Object: q, DependsOn: deps, Sensitive: tenantSensitive(t)}}
}

// VolcanoQueueAnnotation is the pod annotation naming the Volcano Queue a
// pod is scheduled from.
const VolcanoQueueAnnotation = "scheduling.volcano.sh/queue-name"

// Model hands the model's pods to Volcano: the predictor's schedulerName
// is volcano and its pods carry the tenant's Queue in their annotations
// (KServe copies spec.predictor.annotations onto the pods); the model
// waits for the Queue.
func (v *volcano) Model(w *Workload) {
	w.Predictor["schedulerName"] = "volcano"
	w.Predictor["annotations"] = map[string]any{VolcanoQueueAnnotation: w.Namespace}
	w.DependsOn = append(w.DependsOn, engine.KeyFor(engine.KindVolcanoQueue, "", w.Namespace))
}
