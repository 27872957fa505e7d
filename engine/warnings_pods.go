package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
)

// LivePod is what plan and drift read of a running or pending pod: enough
// to tell whether its tenant's policies would refuse it now.
type LivePod struct {
	Namespace, Name string
	// PriorityClass and RuntimeClass are its spec's priorityClassName and
	// runtimeClassName ("" when unset).
	PriorityClass, RuntimeClass string
	// Pool is its nodeSelector's gpuform.dev/pool ("" when unset).
	Pool string
	// GPU says that a container requests or limits a GPU resource
	// (nvidia.com/...).
	GPU bool
}

// MaxLivePods bounds the pods a provider keeps for PodWarnings.
const MaxLivePods = 100_000

// podNamesShown is how many pods a warning names; it counts the rest.
const podNamesShown = 5

// PodWarnings warns, per tenant and rule, of the running and pending pods
// of its namespace that its policies as configured now would refuse: the
// admission policies and the quota act on creation only, so a pod admitted
// before runtime_class, priorities or a quota changed keeps running. The
// rules come from the configuration: a priorityClassName not in the
// tenant's priorities (none allowed when it lists none; system-* never),
// a runtimeClassName not in its runtime_class when it has one, a GPU
// request on a pool (nodeSelector gpuform.dev/pool) where it has no quota.
// One warning per tenant and rule names a few pods and counts the rest.
func PodWarnings(cfg *config.Config, live *Live) hcl.Diagnostics {
	if live == nil || len(live.Pods) == 0 {
		return nil
	}
	byNS := map[string][]*LivePod{}
	for i := range live.Pods {
		p := &live.Pods[i]
		byNS[p.Namespace] = append(byNS[p.Namespace], p)
	}
	var out hcl.Diagnostics
	for _, t := range cfg.Tenants {
		pods := byNS[t.Namespace]
		if len(pods) == 0 {
			continue
		}
		r := tenantRules(t)
		for _, rule := range []struct {
			what   string
			breaks func(*LivePod) bool
		}{
			{"its priorities (" + r.allowedPriorities() + ")", r.breaksPriorities},
			{"its runtime_class (" + strings.Join(t.RuntimeClasses, ", ") + ")", r.breaksRuntimeClass},
			{"its quotas (GPUs on a pool where it has none)", r.breaksQuota},
		} {
			var names []string
			for _, p := range pods {
				if rule.breaks(p) {
					names = append(names, p.Name)
				}
			}
			if len(names) > 0 {
				out = append(out, Warning(podWarning(t.Address, t.Namespace, rule.what, names, live.PodsTruncated), t.Address))
			}
		}
	}
	return out
}

// podWarning is the message of one rule's pods.
func podWarning(address, namespace, what string, names []string, truncated bool) string {
	sort.Strings(names)
	shown := names[:min(len(names), podNamesShown)]
	list := strings.Join(shown, ", ")
	if more := len(names) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	noun, verb := "pods", "break"
	if len(names) == 1 {
		noun, verb = "pod", "breaks"
	}
	msg := fmt.Sprintf("%d running %s of %s in namespace %s %s %s: %s; the API server refuses such pods when they are created, but these keep running: delete or recreate them", len(names), noun, address, namespace, verb, what, list)
	if truncated {
		msg += fmt.Sprintf(" (only the first %d pods of the cluster were read)", MaxLivePods)
	}
	return msg
}

// rules are a tenant's limits on its pods, from its configuration.
type rules struct {
	priorities, runtimeClasses, pools map[string]bool
}

func tenantRules(t *config.Tenant) rules {
	r := rules{priorities: map[string]bool{}, runtimeClasses: map[string]bool{}, pools: map[string]bool{}}
	for _, p := range t.Priorities {
		r.priorities[p.Name] = true
	}
	if len(t.RuntimeClasses) > 0 {
		for _, rc := range t.RuntimeClasses {
			r.runtimeClasses[rc] = true
		}
	} else {
		r.runtimeClasses = nil
	}
	for _, q := range t.Quotas {
		r.pools[q.PoolName] = true
	}
	return r
}

// allowedPriorities lists the allowed priority classes for a message.
func (r rules) allowedPriorities() string {
	if len(r.priorities) == 0 {
		return "none allowed"
	}
	names := slices.Sorted(maps.Keys(r.priorities))
	return "allowed: " + strings.Join(names, ", ")
}

func (r rules) breaksPriorities(p *LivePod) bool {
	if p.PriorityClass == "" {
		return false
	}
	return strings.HasPrefix(p.PriorityClass, "system-") || !r.priorities[p.PriorityClass]
}

func (r rules) breaksRuntimeClass(p *LivePod) bool {
	return r.runtimeClasses != nil && !r.runtimeClasses[p.RuntimeClass]
}

func (r rules) breaksQuota(p *LivePod) bool {
	return p.GPU && p.Pool != "" && !r.pools[p.Pool]
}
