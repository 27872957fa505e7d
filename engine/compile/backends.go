package compile

import (
	"fmt"
	"iter"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// Scheduler is a scheduler backend: what the stack's priorities, pools,
// tenants and models become for the batch scheduler that shares the GPUs
// out (none, Kueue, Volcano). Compile calls it after it compiles each block,
// in the order priorities, pools, tenants, (Objects), models; every object a
// method returns is added with the address of the block it was called for
// (Objects': the stack's).
// Implementations embed noScheduler and override what their scheduler needs.
type Scheduler interface {
	// Priority returns the scheduler's objects for priority p, besides its
	// PriorityClass (Kueue: a WorkloadPriorityClass).
	Priority(p *config.Priority) []*engine.Object
	// Pool returns the scheduler's objects for pool p, whose nodes carry
	// label gpuform.dev/pool=<name> (Kueue: a ResourceFlavor).
	Pool(p *config.Pool) []*engine.Object
	// Tenant returns the scheduler's objects for tenant t, whose quota is
	// quota (Kueue: a ClusterQueue and a LocalQueue; Volcano: a Queue).
	Tenant(t *config.Tenant, quota *capacity.TenantQuota) []*engine.Object
	// ResourceQuota returns what the scheduler adds to the limits of
	// tenant t's ResourceQuota, by their spec.hard name
	// ("requests.<resource>"), so that its workloads may use what the
	// scheduler lets them (Kueue: what they may borrow in the cohort);
	// quotas are every tenant's. It writes into nothing it is given.
	ResourceQuota(quotas *capacity.Quotas, t *config.Tenant) capacity.Counts
	// Objects returns the stack-wide objects the tenants' objects need,
	// called once after the tenants (Kueue: the ResourceFlavor of cpu,
	// memory and pods), or none.
	Objects(cfg *config.Config) []*engine.Object
	// Model adapts a model's workload to the scheduler: labels,
	// annotations, pod spec and what it waits for.
	Model(w *Workload)
	// Validate reports what this scheduler's API would refuse in cfg,
	// whose tenants' quotas are quotas, beyond the checks of every stack.
	Validate(cfg *config.Config, quotas *capacity.Quotas) hcl.Diagnostics
	// Applied sums the GPU quota the stack's applied objects claim under
	// this scheduler, by resource, reading the objects it writes quota
	// into among objs (the applied objects ClaimsQuota picks); ok
	// is false when objs hold none of them (AppliedQuota).
	Applied(objs iter.Seq[*unstructured.Unstructured]) (quota capacity.Counts, ok bool)
	// Arguments lists the arguments of the language that only some
	// schedulers read and this one does, as block path and name
	// ("tenant.cohort", "tenant.quota.borrowing_limit"). Validate refuses
	// an argument that schedulers of the table declare but the stack's
	// does not: written under that scheduler it would do nothing.
	Arguments() []string
}

// MIGBackend is what partitions the GPUs of pools that have a mig_layout:
// the GPU Operator's mig-manager, or the gpuform agent. One is made per
// compilation: Compile calls Pool for each MIG pool, then Objects once,
// then Model for each model.
type MIGBackend interface {
	// Pool sets on np what the nodes of pool p, which has a MIG layout,
	// must carry (labels or annotations naming the layout), the label or
	// annotation that reports when the change is done, and what must exist
	// before the nodes are labelled. It returns an error when the layout
	// cannot be encoded.
	Pool(p *config.Pool, np *engine.NodePool) error
	// Objects returns the stack-wide objects the pools given to Pool need
	// (the GPU Operator: the mig-parted ConfigMap), or none.
	Objects() ([]*engine.Object, error)
	// Model adds to w what its model waits for when it asks for a MIG slice.
	Model(w *Workload)
}

// Workload is a model's InferenceService while it is compiled, for the
// backends to adapt. Its maps are the object's own: what a backend writes
// into them is applied.
type Workload struct {
	// Model is the model block; Namespace its tenant's namespace.
	Model     *config.Model
	Namespace string
	// Priority is the model's priority, or its tenant's default; nil when
	// it has neither.
	Priority *config.Priority
	// Labels and Annotations are the InferenceService's metadata.
	Labels      map[string]any
	Annotations map[string]any
	// Predictor is the InferenceService's spec.predictor: the pod's node
	// selector, priority class, model and resources, in maps of this
	// model's own, which a backend may change.
	Predictor map[string]any
	// DependsOn lists the objects that must exist before the model.
	DependsOn []engine.Key
}

// The backends by the value of their setting in the gpuform block (values
// config accepts): adding a backend is one row here and its one file.

func schedulers() map[string]func(*config.Settings) Scheduler {
	return map[string]func(*config.Settings) Scheduler{
		config.SchedulerNone:    newNoScheduler,
		config.SchedulerKueue:   newKueue,
		config.SchedulerVolcano: newVolcano,
	}
}

func migBackends() map[string]func(*config.Settings) MIGBackend {
	return map[string]func(*config.Settings) MIGBackend{
		config.BackendGPUOperator: newGPUOperator,
		config.BackendAgent:       newAgent,
	}
}

// newScheduler returns the scheduler backend settings s name.
func newScheduler(s *config.Settings) (Scheduler, error) {
	if mk, ok := schedulers()[s.Scheduler]; ok {
		return mk(s), nil
	}
	return nil, fmt.Errorf("unknown scheduler %q", s.Scheduler)
}

// newMIGBackend returns the MIG backend settings s name.
func newMIGBackend(s *config.Settings) (MIGBackend, error) {
	if mk, ok := migBackends()[s.MIGBackend]; ok {
		return mk(s), nil
	}
	return nil, fmt.Errorf("unknown MIG backend %q", s.MIGBackend)
}
