package compile

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/config"
)

// maxMultiKueueClusters is how many clusters one MultiKueueConfig may list
// (Kueue's CRD: spec.clusters maxItems 20).
const maxMultiKueueClusters = 20

// multiKueue checks the tenants dispatched by MultiKueue (multikueue.go):
// Kueue as the scheduler, one manager in the fleet, at least one worker
// (and at most what a MultiKueueConfig lists), each named in the fleet
// with the Secret that holds its kubeconfig. Any gap fails closed: a
// tenant whose jobs could not reach a worker is refused, not compiled.
func (v *validator) multiKueue() {
	managers := 0
	for _, m := range v.cfg.Fleet {
		if m.Role == config.RoleManager {
			managers++
		}
	}
	for _, t := range v.cfg.Tenants {
		switch t.Dispatch {
		case "":
			continue
		case config.DispatchMultiKueue:
		default:
			v.errorf(t.DeclRange, "Unknown dispatch", "Tenant %q has dispatch %q; the only dispatch gpuform knows is %q.", t.Name, t.Dispatch, config.DispatchMultiKueue)
			continue
		}
		if s := v.cfg.Settings; s == nil || s.Scheduler != config.SchedulerKueue {
			v.errorf(t.DeclRange, "MultiKueue needs Kueue", "Tenant %q is dispatched by MultiKueue, which is part of Kueue: set scheduler = %q in the gpuform block.", t.Name, config.SchedulerKueue)
		}
		switch managers {
		case 0:
			v.errorf(t.DeclRange, "No MultiKueue manager", "Tenant %q is dispatched by MultiKueue, but no cluster of the fleet has role = %q: MultiKueue needs a manager cluster where the tenant's jobs are submitted.", t.Name, config.RoleManager)
		case 1:
			v.multiKueueWorkers(t)
		default:
			v.errorf(t.DeclRange, "More than one MultiKueue manager", "Tenant %q is dispatched by MultiKueue, but %d clusters of the fleet have role = %q; a fleet has one manager.", t.Name, managers, config.RoleManager)
		}
	}
}

// multiKueueWorkers checks the workers of dispatched tenant t, once the
// fleet has its one manager (without one every member would be a worker).
func (v *validator) multiKueueWorkers(t *config.Tenant) {
	workers := 0
	for _, name := range t.Clusters {
		m := fleetMember(v.cfg, name)
		switch {
		case m == nil:
			v.errorf(t.DeclRange, "Unknown cluster", "Tenant %q is placed on cluster %q, which the fleet does not have.", t.Name, name)
			continue
		case m.Role == config.RoleManager:
			continue
		}
		workers++
		if m.KubeconfigSecret == "" {
			v.errorf(m.DeclRange, "Worker without kubeconfig_secret", "Cluster %q is a MultiKueue worker of tenant %q but has no kubeconfig_secret: name the Secret, in Kueue's namespace on the manager cluster, that holds the kubeconfig MultiKueue uses to reach it (gpuform never reads it).", m.Name, t.Name)
		} else {
			v.name(m.DeclRange, "The kubeconfig_secret of cluster "+m.Name, m.KubeconfigSecret, validation.IsDNS1123Subdomain)
		}
		v.name(m.DeclRange, "The MultiKueueCluster name", m.Name, validation.IsDNS1123Subdomain)
	}
	switch {
	case workers == 0:
		v.errorf(t.DeclRange, "No MultiKueue worker", "Tenant %q is dispatched by MultiKueue but placed on no worker cluster: place it on at least one cluster besides the manager.", t.Name)
	case workers > maxMultiKueueClusters:
		v.errorf(t.DeclRange, "Too many MultiKueue workers", "Tenant %q is dispatched to %d worker clusters; a MultiKueueConfig lists at most %d.", t.Name, workers, maxMultiKueueClusters)
	}
}
