package capacity

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
)

// Volcano enforces a hierarchy of Queues (spec.parent) only with its
// capacity plugin in hierarchical mode, which the Volcano scheduler's own
// configuration sets: a tier's plugin named capacity with enableHierarchy:
// true. Its standard install (installer/volcano-development.yaml of
// volcano.sh/volcano, and its Helm chart with release name volcano) keeps
// that configuration in the ConfigMap volcano-scheduler-configmap, key
// volcano-scheduler.conf, in Volcano's namespace (volcano-system). Read at
// Volcano v1.15.1: pkg/scheduler/conf/scheduler_conf.go (tiers, plugins,
// name, enableHierarchy) and Session.HierarchyEnabled (the first plugin
// of that name, tier by tier, decides; not set is off).
const (
	// VolcanoConfigMap and VolcanoConfigKey name the Volcano scheduler's
	// configuration.
	VolcanoConfigMap = "volcano-scheduler-configmap"
	VolcanoConfigKey = "volcano-scheduler.conf"
	// VolcanoNamespace is Volcano's namespace in its standard install: the
	// ConfigMap there is Volcano's when other namespaces have one too.
	VolcanoNamespace = "volcano-system"
	// volcanoCapacityPlugin is the plugin that enforces the hierarchy.
	volcanoCapacityPlugin = "capacity"
)

// VolcanoConfig is what plan read of the Volcano scheduler's
// configuration.
type VolcanoConfig struct {
	// Listed says the provider looked for the ConfigMap (false only for a
	// Live built by hand).
	Listed bool
	// Source is the ConfigMap read, namespace/name; empty when none was.
	Source string
	// Problem says why the configuration is not known: no ConfigMap,
	// several, no key, YAML that does not parse. Empty when it was read.
	Problem string
	// Capacity says a tier enables the capacity plugin; Hierarchy that
	// its enableHierarchy is true.
	Capacity, Hierarchy bool
}

// volcanoConfiguration is the part of the Volcano scheduler's
// configuration (SchedulerConfiguration) that plan reads.
type volcanoConfiguration struct {
	Tiers []struct {
		Plugins []struct {
			Name            string `json:"name"`
			EnableHierarchy *bool  `json:"enableHierarchy,omitempty"`
		} `json:"plugins"`
	} `json:"tiers"`
}

// VolcanoConfigOf reads the Volcano scheduler's configuration from the
// ConfigMaps items (those named VolcanoConfigMap count): the one in
// VolcanoNamespace, else the only one.
func VolcanoConfigOf(items []*unstructured.Unstructured) VolcanoConfig {
	vc := VolcanoConfig{Listed: true}
	var c volcanoConfiguration
	if vc.Source, vc.Problem = decodeConfigMap(items, VolcanoConfigMap, VolcanoNamespace, VolcanoConfigKey, "Volcano", &c); vc.Problem != "" {
		return vc
	}
	for _, tier := range c.Tiers {
		for _, p := range tier.Plugins {
			if p.Name == volcanoCapacityPlugin && !vc.Capacity {
				vc.Capacity = true
				vc.Hierarchy = p.EnableHierarchy != nil && *p.EnableHierarchy
			}
		}
	}
	return vc
}

// volcanoHierarchyYAML is what the Volcano scheduler's configuration needs
// for the tree: the capacity plugin with enableHierarchy.
const volcanoHierarchyYAML = "tiers:\n- plugins:\n  - name: capacity\n    enableHierarchy: true"

// VolcanoTree checks the Volcano scheduler's configuration vc against the
// stack's departments under scheduler = "volcano": it refuses them when a
// readable configuration leaves the capacity plugin's hierarchy off (Volcano
// would ignore every Queue's parent), and warns when it cannot be read
// (each tenant's ResourceQuota still bounds it; only Volcano's enforcement
// of the departments' shares is unproven). Nothing without departments,
// or when vc was not looked for.
func VolcanoTree(cfg *config.Config, vc VolcanoConfig) hcl.Diagnostics {
	if cfg.Settings.Scheduler != config.SchedulerVolcano || !vc.Listed || len(cfg.Departments) == 0 {
		return nil
	}
	d := cfg.Departments[0]
	if vc.Problem != "" {
		return hcl.Diagnostics{{
			Severity: hcl.DiagWarning, Summary: "Volcano's configuration not read", Subject: d.DeclRange.Ptr(),
			Detail: fmt.Sprintf("The stack's departments are hierarchical Volcano Queues, which Volcano enforces only with its capacity plugin in hierarchical mode, but plan could not read the Volcano scheduler's configuration: %s. Each tenant's ResourceQuota still bounds what it uses; whether Volcano enforces the departments' shares is unproven. Volcano's standard install keeps its configuration in ConfigMap %s/%s, key %s; it needs:\n%s",
				vc.Problem, VolcanoNamespace, VolcanoConfigMap, VolcanoConfigKey, volcanoHierarchyYAML),
		}}
	}
	if vc.Capacity && vc.Hierarchy {
		return nil
	}
	what := "does not enable the capacity plugin"
	if vc.Capacity {
		what = "enables the capacity plugin without enableHierarchy: true"
	}
	return hcl.Diagnostics{problem(d.DeclRange, "Volcano's hierarchy off",
		"The stack's departments are hierarchical Volcano Queues, but the Volcano scheduler's configuration (ConfigMap %s, key %s) %s, so Volcano would ignore every Queue's parent and no department's quota would be shared. Use the capacity plugin in hierarchical mode there:\n%s",
		vc.Source, VolcanoConfigKey, what, volcanoHierarchyYAML)}
}
