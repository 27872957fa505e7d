package compile

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// Compile turns a validated configuration into the objects gpuform wants
// and the labels of each pool's nodes, with dependency edges. What the
// stack's scheduler and MIG backend add comes from their backends.
func Compile(cfg *config.Config) (*engine.Desired, error) {
	sched, err := newScheduler(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	migb, err := newMIGBackend(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return compileWith(cfg, sched, migb)
}

// compileWith is Compile with the given backends.
func compileWith(cfg *config.Config, sched Scheduler, migb MIGBackend) (*engine.Desired, error) {
	c := &compiler{
		cfg: cfg, stack: cfg.Settings.Stack, sched: sched, mig: migb, dp: newDevicePlugin(cfg.Settings),
		d:      &engine.Desired{Stack: cfg.Settings.Stack, Kinds: engine.ManagedKinds(), Sources: map[string]string{}},
		share:  newSharer(),
		quotas: capacity.QuotasOf(cfg), defaultPriorities: map[string]*config.Priority{},
	}
	for _, p := range cfg.Priorities {
		c.priority(p)
	}
	if err := c.pools(); err != nil {
		return nil, err
	}
	c.multiKueueFlavors()
	c.departments()
	for _, t := range cfg.Tenants {
		c.tenant(t)
	}
	c.multiKueueClusters()
	c.add(engine.StackAddress, sched.Objects(cfg)...)
	for _, m := range cfg.Models {
		c.model(m)
	}
	if len(cfg.Tenants) > 0 {
		c.prioritiesPolicy()
		c.poolsPolicy()
		c.deviceClassesPolicy()
		c.defaultPriorityPolicies()
	}
	if c.enforceRuntimeClasses {
		c.runtimeClassPolicy()
	}
	c.alerts()
	return c.d, nil
}

// compiler holds one compilation: the configuration, its backends and the
// objects so far.
type compiler struct {
	// enforceRuntimeClasses is set once a tenant has a runtime_class.
	enforceRuntimeClasses bool
	cfg                   *config.Config
	stack                 string
	sched                 Scheduler
	mig                   MIGBackend
	dp                    *devicePlugin
	d                     *engine.Desired
	// share shares the leaf maps of each object added.
	share *sharer
	// quotas are the tenants' GPU quotas, computed once for every reader.
	quotas *capacity.Quotas
	// defaultPriorities are the tenants' default priorities, by name.
	defaultPriorities map[string]*config.Priority
}

// add appends objects compiled from the block at address. An object added
// is final: its leaf maps are shared and its key kept now, while its maps
// are still in the processor's cache.
func (c *compiler) add(address string, objs ...*engine.Object) {
	for _, o := range objs {
		o.Address = address
		c.share.in(o.Object.Object)
		o.CacheKey()
		c.d.Objects = append(c.d.Objects, o)
	}
}

// priority compiles a priority into its PriorityClass and what the
// scheduler adds for it.
func (c *compiler) priority(p *config.Priority) {
	pc := newObject(engine.KindPriorityClass, "", p.Name, c.stack, p.Address)
	pc.Object["value"] = p.Value
	pc.Object["preemptionPolicy"] = p.Preemption
	if p.Description != "" {
		pc.Object["description"] = p.Description
	}
	c.add(p.Address, &engine.Object{Object: pc, Sensitive: anySensitive(&p.Meta)})
	c.add(p.Address, c.sched.Priority(p)...)
}

// pools compiles what each pool asks of its nodes, the scheduler's objects
// for it, and then the ConfigMaps the MIG backend and the device plugin
// need.
func (c *compiler) pools() error {
	for _, p := range c.cfg.Pools {
		np := &engine.NodePool{Address: p.Address, Pool: p.Name, Selector: p.NodeSelector, Labels: map[string]string{engine.LabelPool: p.Name}, MaxUnavailable: p.MaxUnavailable}
		switch {
		case p.MIGLayout != nil:
			if err := c.mig.Pool(p, np); err != nil {
				return fmt.Errorf("compile %s: %w", p.Address, err)
			}
		case p.Shared() != nil:
			c.dp.Pool(p, np)
		}
		c.d.Pools = append(c.d.Pools, np)
		c.add(p.Address, c.sched.Pool(p)...)
		c.add(p.Address, c.deviceClasses(p)...)
		if pin := driverPin(c.cfg.Settings, p); pin != nil {
			c.add(p.Address, pin)
		}
	}
	for _, objects := range []func() ([]*engine.Object, error){c.mig.Objects, c.dp.Objects} {
		objs, err := objects()
		if err != nil {
			return err
		}
		c.add(engine.StackAddress, objs...)
	}
	return nil
}

// model compiles a model into its InferenceService, adapted by the
// scheduler and the MIG backend.
func (c *compiler) model(m *config.Model) {
	if m.Tenant == nil || m.Pool == nil {
		return
	}
	ns := m.Tenant.Namespace
	resource, count := capacity.GPUResource(m.Pool), int64(m.GPUs)
	if m.Slice != "" {
		resource, count = engine.MIGResource(m.Slice), 1
	}
	qty := strconv.FormatInt(count, 10)
	modelSpec := map[string]any{
		"modelFormat": map[string]any{"name": m.Format},
		"storageUri":  m.StorageURI,
		"resources":   containerResources(resource, qty),
	}
	if m.Runtime != "" {
		modelSpec["runtime"] = m.Runtime
	}
	if len(m.Env) > 0 {
		modelSpec["env"] = envVars(m.Env)
	}
	predictor := map[string]any{
		"minReplicas":  int64(m.MinReplicas),
		"maxReplicas":  int64(m.MaxReplicas),
		"nodeSelector": map[string]any{engine.LabelPool: m.Pool.Name},
		"model":        modelSpec,
	}
	w := &Workload{Model: m, Namespace: ns, Priority: m.Priority, Predictor: predictor, DependsOn: []engine.Key{engine.KeyFor(engine.KindNamespace, "", ns)}}
	if w.Priority == nil {
		w.Priority = m.Tenant.DefaultPriority
	}
	if w.Priority != nil {
		predictor["priorityClassName"] = w.Priority.Name
		w.DependsOn = append(w.DependsOn, engine.KeyFor(engine.KindPriorityClass, "", w.Priority.Name))
	}
	if m.Pool.DRA() {
		c.add(m.Address, c.draModel(m, w, modelSpec))
	}
	isvc := newObject(engine.KindInferenceService, ns, m.Name, c.stack, m.Address)
	meta := isvc.Object["metadata"].(map[string]any)
	w.Labels, w.Annotations = meta["labels"].(map[string]any), meta["annotations"].(map[string]any)
	w.Annotations["serving.kserve.io/deploymentMode"] = m.DeploymentMode
	isolateModel(m, w)
	c.sched.Model(w)
	c.mig.Model(w)
	isvc.Object["spec"] = map[string]any{"predictor": predictor}
	c.add(m.Address, &engine.Object{Object: isvc, DependsOn: w.DependsOn, Sensitive: anySensitive(&m.Meta)})
}

// envVars is a container's env list from a model's env map, by name.
func envVars(env map[string]string) []any {
	names := slices.Sorted(maps.Keys(env))
	out := make([]any, len(names))
	for i, k := range names {
		out[i] = map[string]any{"name": k, "value": env[k]}
	}
	return out
}
