package compile

import (
	"cmp"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// MultiKueue (docs/fleet.md, "MultiKueue"): a tenant with dispatch
// "multikueue" submits its jobs on the fleet's manager cluster, whose Kueue
// copies each admitted workload to the tenant's worker clusters and keeps
// the copy the first worker admits. On the manager the tenant gets its
// namespace, its LocalQueue and a ClusterQueue that carries the MultiKueue
// admission check, with the sum of its workers' quotas (the configuration
// loaded for the manager holds the sums); the stack gets one
// MultiKueueCluster per worker (shared by every tenant on that worker). The
// tenant's jobs never run on the manager (MultiKueue manages them:
// spec.managedBy), so it uses none of the manager's GPUs: the pools placed
// on the manager compile as on any cluster, for the manager's own tenants,
// and a worker's pool not placed on the manager gets its ResourceFlavor
// only. On a worker the tenant compiles as on any cluster: its quota there
// is what Kueue on the worker holds.

// multiKueueController is the controllerName of MultiKueue's admission
// checks (kueue.x-k8s.io/multikueue, Kueue's MultiKueueControllerName).
const multiKueueController = "kueue.x-k8s.io/multikueue"

// onManager reports whether cfg is compiled for the fleet's MultiKueue
// manager cluster.
func onManager(cfg *config.Config) bool {
	return cfg.Cluster != nil && cfg.Cluster.Role == config.RoleManager
}

// dispatched reports whether tenant t is dispatched by MultiKueue from the
// cluster cfg is compiled for: a multikueue tenant on the manager.
func dispatched(cfg *config.Config, t *config.Tenant) bool {
	return t.Dispatch == config.DispatchMultiKueue && onManager(cfg)
}

// fleetMember returns the fleet member named name, nil when none.
func fleetMember(cfg *config.Config, name string) *config.Cluster {
	for _, c := range cfg.Fleet {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// multiKueueWorkers returns the members tenant t is placed on besides the
// manager, in the tenant's order: the clusters MultiKueue dispatches its
// jobs to. A name the fleet does not have is left out (validation refuses
// it).
func multiKueueWorkers(cfg *config.Config, t *config.Tenant) []*config.Cluster {
	var out []*config.Cluster
	for _, name := range t.Clusters {
		if m := fleetMember(cfg, name); m != nil && m.Role != config.RoleManager {
			out = append(out, m)
		}
	}
	return out
}

// multiKueueTenant is a dispatched tenant's queues on the manager: the
// scheduler's ClusterQueue and LocalQueue, the ClusterQueue carrying the
// tenant's AdmissionCheck, and the AdmissionCheck and the
// MultiKueueConfig listing its workers. Both are named after the tenant's
// namespace, as its ClusterQueue is. The ClusterQueue's quota is the
// tenant's quota blocks as they are: on the manager, the configuration
// holds their sums over the tenant's workers (config, "The manager's
// quota").
func (c *compiler) multiKueueTenant(t *config.Tenant) []*engine.Object {
	ns := t.Namespace
	workers := multiKueueWorkers(c.cfg, t)
	sens := tenantSensitive(t)
	objs := c.sched.Tenant(t, c.quotas.Of(t))
	acKey := engine.KeyFor(engine.KindAdmissionCheck, "", ns)
	for _, o := range objs {
		if o.Object.GroupVersionKind().GroupKind() != engine.KindClusterQueue.GroupKind() {
			continue
		}
		spec, _ := o.Object.Object["spec"].(map[string]any)
		spec["admissionChecksStrategy"] = map[string]any{"admissionChecks": []any{map[string]any{"name": ns}}}
		o.DependsOn = append(o.DependsOn, acKey)
	}

	names := make([]any, len(workers))
	var clusterKeys []engine.Key
	for i, w := range workers {
		names[i] = w.Name
		clusterKeys = append(clusterKeys, engine.KeyFor(engine.KindMKCluster, "", w.Name))
	}
	mkc := newObject(engine.KindMKConfig, "", ns, c.stack, t.Address)
	mkc.Object["spec"] = map[string]any{"clusters": names}
	ac := newObject(engine.KindAdmissionCheck, "", ns, c.stack, t.Address)
	ac.Object["spec"] = map[string]any{
		"controllerName": multiKueueController,
		"parameters": map[string]any{
			"apiGroup": engine.KindMKConfig.Group,
			"kind":     engine.KindMKConfig.Kind,
			"name":     ns,
		},
	}
	return append(objs,
		&engine.Object{Object: mkc, DependsOn: clusterKeys, Sensitive: sens},
		&engine.Object{Object: ac, DependsOn: []engine.Key{engine.KeyFor(engine.KindMKConfig, "", ns)}, Sensitive: sens},
	)
}

// multiKueueClusters adds one MultiKueueCluster per worker of the dispatched
// tenants, named after the member and shared by its tenants: MultiKueue
// reaches the worker with the kubeconfig in the Secret the member's
// kubeconfig_secret names, in Kueue's namespace on the manager. gpuform
// writes the Secret's name only: it never reads, plans or stores the
// kubeconfig.
func (c *compiler) multiKueueClusters() {
	seen := map[string]bool{}
	for _, t := range c.cfg.Tenants {
		if !dispatched(c.cfg, t) {
			continue
		}
		for _, w := range multiKueueWorkers(c.cfg, t) {
			if seen[w.Name] {
				continue
			}
			seen[w.Name] = true
			mc := newObject(engine.KindMKCluster, "", w.Name, c.stack, w.Address)
			mc.Object["spec"] = map[string]any{"clusterSource": map[string]any{
				"kubeConfig": map[string]any{"locationType": "Secret", "location": w.KubeconfigSecret},
			}}
			c.add(cmp.Or(w.Address, engine.StackAddress), &engine.Object{Object: mc, Sensitive: anySensitive(&w.Meta)})
		}
	}
}

// multiKueueFlavors adds, on the manager, the ResourceFlavor of each pool
// a dispatched tenant has quota in on a worker but that is not placed on
// the manager (config.Config.FlavorPools): the tenant's ClusterQueue names
// it. Nothing else of the pool is compiled there: no node pool, no labels,
// no device configuration, since no dispatched job runs on the manager.
func (c *compiler) multiKueueFlavors() {
	if !onManager(c.cfg) {
		return
	}
	for _, p := range c.cfg.FlavorPools {
		c.add(p.Address, c.sched.Pool(p)...)
	}
}
