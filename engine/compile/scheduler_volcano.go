package compile

import (
	"strconv"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// volcano is scheduler "volcano": a Queue per tenant whose capability is
// the sum of its quotas (and its cpu and memory), with its weight and
// whether others may reclaim from it.
type volcano struct {
	noScheduler
	stack string
}

func newVolcano(s *config.Settings) Scheduler { return volcano{stack: s.Stack} }

// Arguments: a tenant's weight and reclaimable become fields of its Queue.
func (volcano) Arguments() []string { return []string{"tenant.weight", "tenant.reclaimable"} }

// Tenant is the tenant's Queue, named after its namespace.
func (v volcano) Tenant(t *config.Tenant, quota *capacity.TenantQuota) []*engine.Object {
	capability := map[string]any{}
	for r, n := range quota.Total() {
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
	q.Object["spec"] = spec
	return []*engine.Object{{Object: q, Sensitive: tenantSensitive(t)}}
}

// VolcanoQueueAnnotation is the pod annotation naming the Volcano Queue a
// pod is scheduled from.
const VolcanoQueueAnnotation = "scheduling.volcano.sh/queue-name"

// Model hands the model's pods to Volcano: the predictor's schedulerName
// is volcano and its pods carry the tenant's Queue in their annotations
// (KServe copies spec.predictor.annotations onto the pods); the model
// waits for the Queue.
func (v volcano) Model(w *Workload) {
	w.Predictor["schedulerName"] = "volcano"
	w.Predictor["annotations"] = map[string]any{VolcanoQueueAnnotation: w.Namespace}
	w.DependsOn = append(w.DependsOn, engine.KeyFor(engine.KindVolcanoQueue, "", w.Namespace))
}
