package capacity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
)

// Kueue counts a DRA pool's devices against a ClusterQueue's quota only
// through its own configuration: resources.deviceClassMappings, which maps
// DeviceClasses to the resource a ClusterQueue names, and its DRA feature
// gate. Its standard install (config/components/manager of
// sigs.k8s.io/kueue, and its Helm chart with release name kueue) keeps
// that configuration in the ConfigMap kueue-manager-config, key
// controller_manager_config.yaml, in Kueue's namespace (kueue-system by
// default). Read at Kueue v0.17.0 and v0.19.2:
//   - v0.17: the gate is DynamicResourceAllocation, alpha, off by default
//     (pkg/features/kube_features.go);
//   - v0.18 and later: KueueDRAIntegration, beta, on by default, and
//     DynamicResourceAllocation is no gate Kueue knows.
//
// Gates set on the command line (--feature-gates, which Kueue's Helm chart
// uses) are not in the ConfigMap; Kueue refuses both at once, so a
// configuration with featureGates holds every gate set.
const (
	// KueueConfigMap and KueueConfigKey name Kueue's configuration.
	KueueConfigMap = "kueue-manager-config"
	KueueConfigKey = "controller_manager_config.yaml"
	// KueueNamespace is Kueue's namespace in its standard install: the
	// ConfigMap there is Kueue's when other namespaces have one too.
	KueueNamespace = "kueue-system"
	// The DRA feature gates of Kueue v0.17 and of v0.18 and later.
	kueueGateV017 = "DynamicResourceAllocation"
	kueueGateV018 = "KueueDRAIntegration"
)

// KueueConfig is what plan read of Kueue's configuration.
type KueueConfig struct {
	// Listed says the provider looked for the ConfigMap (both providers
	// do on every refresh; false only for a Live built by hand).
	Listed bool
	// Source is the ConfigMap read, namespace/name; empty when none was.
	Source string
	// Problem says why the configuration is not known: no ConfigMap,
	// several, no key, YAML that does not parse. Empty when it was read.
	Problem string
	// Mappings are the resources each DeviceClass is mapped to.
	Mappings map[string][]string
	// Gates are the configuration's featureGates.
	Gates map[string]bool
}

// kueueConfiguration is the part of Kueue's Configuration
// (config.kueue.x-k8s.io/v1beta2, apis/config/v1beta2) that plan reads.
type kueueConfiguration struct {
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	Resources    *struct {
		DeviceClassMappings []struct {
			Name             string   `json:"name"`
			DeviceClassNames []string `json:"deviceClassNames"`
		} `json:"deviceClassMappings,omitempty"`
	} `json:"resources,omitempty"`
}

// KueueConfigOf reads Kueue's configuration from the ConfigMaps items
// (those named KueueConfigMap count): the one in KueueNamespace, else the
// only one.
func KueueConfigOf(items []*unstructured.Unstructured) KueueConfig {
	kc := KueueConfig{Listed: true}
	var c kueueConfiguration
	if kc.Source, kc.Problem = decodeConfigMap(items, KueueConfigMap, KueueNamespace, KueueConfigKey, "Kueue", &c); kc.Problem != "" {
		return kc
	}
	kc.Gates = c.FeatureGates
	kc.Mappings = map[string][]string{}
	if c.Resources != nil {
		for _, m := range c.Resources.DeviceClassMappings {
			for _, class := range m.DeviceClassNames {
				kc.Mappings[class] = append(kc.Mappings[class], m.Name)
			}
		}
	}
	return kc
}

// gate says whether the configuration turns Kueue's DRA integration on
// (true), off (false) or does not say (set: false).
func (kc KueueConfig) gate() (on, set bool) {
	for _, g := range []string{kueueGateV017, kueueGateV018} {
		if v, ok := kc.Gates[g]; ok {
			return v, true
		}
	}
	return false, false
}

// kueueClasses are the DeviceClasses whose device quotas the stack's
// ClusterQueues hold (those of a DRA pool a tenant or a department has a
// quota block on), by pool, in pool order.
func kueueClasses(cfg *config.Config, quotas *Quotas) ([]*config.Pool, map[*config.Pool][]string) {
	used := map[string]bool{}
	add := func(bs []BlockQuota) {
		for _, b := range bs {
			for _, r := range b.Offered {
				if class, ok := IsDeviceClassQuota(r); ok {
					used[class] = true
				}
			}
		}
	}
	for _, tq := range quotas.Tenants {
		add(tq.Blocks)
	}
	for _, dq := range quotas.Departments {
		add(dq.Blocks)
	}
	var pools []*config.Pool
	byPool := map[*config.Pool][]string{}
	for _, p := range cfg.Pools {
		for class := range DeviceClasses(cfg.Settings.Stack, p) {
			if used[class] {
				byPool[p] = append(byPool[p], class)
			}
		}
		if len(byPool[p]) > 0 {
			slices.Sort(byPool[p])
			pools = append(pools, p)
		}
	}
	return pools, byPool
}

// KueueDRA checks Kueue's configuration kc against the DeviceClasses the
// stack's ClusterQueues hold quota of, under scheduler = "kueue": it
// returns the plan's sentence on what it found (empty when no ClusterQueue
// holds a DRA pool's quota, or kc was not looked for) and refuses each
// such pool whose classes a readable configuration does not map to their
// device-quota resource, or all of them when it turns the DRA feature gate
// off. A configuration that cannot be read is a warning: each tenant's
// ResourceQuota still bounds its devices per DeviceClass, and only Kueue's
// own count is unproven (docs/language.md, DRA pools).
func KueueDRA(cfg *config.Config, kc KueueConfig, quotas *Quotas) (string, hcl.Diagnostics) {
	if cfg.Settings.Scheduler != config.SchedulerKueue || !kc.Listed {
		return "", nil
	}
	pools, byPool := kueueClasses(cfg, quotas)
	if len(pools) == 0 {
		return "", nil
	}
	if kc.Problem != "" {
		return "configuration not read (" + kc.Problem + ")", hcl.Diagnostics{{
			Severity: hcl.DiagWarning, Summary: "Kueue's configuration not read", Subject: pools[0].Range("mode").Ptr(),
			Detail: fmt.Sprintf("The stack's ClusterQueues hold quotas of DeviceClasses of its DRA pools, and Kueue counts those devices only if its configuration maps each class, but plan could not read that configuration: %s. Each tenant's ResourceQuota still bounds the devices it claims per DeviceClass; whether Kueue admits workloads within the ClusterQueues' device quotas is unproven. Kueue's standard install keeps its configuration in ConfigMap %s/%s, key %s; it needs:\n%s",
				kc.Problem, KueueNamespace, KueueConfigMap, KueueConfigKey, mappingsYAML(pools, byPool)),
		}}
	}
	var diags hcl.Diagnostics
	mapped, total := 0, 0
	for _, p := range pools {
		var missing []string
		for _, class := range byPool[p] {
			total++
			if slices.Contains(kc.Mappings[class], DeviceClassQuota(class)) {
				mapped++
				continue
			}
			missing = append(missing, class)
		}
		if len(missing) > 0 {
			diags = append(diags, problem(p.Range("mode"), "DeviceClasses Kueue does not count",
				"Pool %s is a DRA pool under scheduler = \"kueue\", but Kueue's configuration (ConfigMap %s, key %s) does not map its DeviceClasses %s to their device-quota resources: Kueue would not count those devices against the tenants' ClusterQueue quotas. Add to Kueue's configuration:\n%s",
				p.Name, kc.Source, KueueConfigKey, strings.Join(missing, ", "), mappingsYAML([]*config.Pool{p}, map[*config.Pool][]string{p: missing})))
		}
	}
	sentence := fmt.Sprintf("configuration %s maps %d of the %d DeviceClasses the ClusterQueues hold quota of", kc.Source, mapped, total)
	switch on, set := kc.gate(); {
	case set && !on:
		diags = append(diags, problem(pools[0].Range("mode"), "Kueue's DRA feature gate off",
			"The stack's DRA pools are under scheduler = \"kueue\", but Kueue's configuration (ConfigMap %s, key %s) sets its DRA feature gate off, so Kueue counts no device against the tenants' ClusterQueue quotas. Set featureGates: {%s: true} there (Kueue v0.17; from v0.18 the gate is %s, on by default: remove the entry).",
			kc.Source, KueueConfigKey, kueueGateV017, kueueGateV018))
		sentence += "; its DRA feature gate is off"
	case set:
		sentence += "; its DRA feature gate is on"
	default:
		sentence += fmt.Sprintf("; it sets no DRA feature gate (%s is on by default from Kueue v0.18; Kueue v0.17 needs %s: true, which --feature-gates may set)", kueueGateV018, kueueGateV017)
	}
	return sentence, diags
}

// mappingsYAML is the resources.deviceClassMappings entries of classes,
// pool by pool, as Kueue's configuration writes them.
func mappingsYAML(pools []*config.Pool, classes map[*config.Pool][]string) string {
	var b strings.Builder
	b.WriteString("resources:\n  deviceClassMappings:\n")
	for _, p := range pools {
		for _, class := range classes[p] {
			fmt.Fprintf(&b, "  - name: %s\n    deviceClassNames: [%s]\n", DeviceClassQuota(class), class)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
