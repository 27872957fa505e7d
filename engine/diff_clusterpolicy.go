package engine

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
)

// MIGStrategyMixed is the GPU Operator's spec.mig.strategy under which its
// device plugin advertises each MIG profile as its own resource,
// nvidia.com/mig-<profile>: what gpuform's quotas, ClusterQueues, Queues
// and models ask for. Under "single" (the chart's default) a MIG node
// advertises only nvidia.com/gpu, and the device plugin refuses a node
// whose GPUs carry different profiles.
const MIGStrategyMixed = "mixed"

// DiffClusterPolicies points the GPU Operator at gpuform's mig-parted and
// device-plugin ConfigMaps and, when a pool has a MIG layout (either
// backend), sets its MIG strategy to mixed. With MIG or time-slicing pools
// on the gpu-operator backend, a cluster without a ClusterPolicy is an
// error; MIG pools on the agent backend without one are a warning unless
// their nodes already advertise MIG resources. A ClusterPolicy pointed at
// another ConfigMap, or with another MIG strategy, is a warning about the
// first pool that needs the component (see Warning).
func DiffClusterPolicies(d *Desired, live *Live) ([]*Change, hcl.Diagnostics, error) {
	want := map[string]string{} // spec path component -> ConfigMap name
	for _, o := range d.Objects {
		// The kept key, not the object's maps: this reads every desired object.
		switch k := o.Key(); k {
		case Key{Kind: "ConfigMap", Namespace: k.Namespace, Name: MIGPartedConfig}:
			want["migManager"] = MIGPartedConfig
		case Key{Kind: "ConfigMap", Namespace: k.Namespace, Name: DevicePluginConf}:
			want["devicePlugin"] = DevicePluginConf
		}
	}
	neededBy, needers := policyNeeders(d)
	dropping := map[string]bool{} // components whose ConfigMap this stack deletes
	for k := range live.Objects {
		for component, name := range ownConfig {
			if k.Kind == "ConfigMap" && k.Group == "" && k.Name == name && want[component] == "" {
				dropping[component] = true
			}
		}
	}
	if len(live.ClusterPolicies) == 0 {
		if len(want) == 0 && neededBy["mig"] == "" {
			return nil, nil, nil
		}
		if len(want) == 0 { // MIG pools on the agent backend
			if np := migPoolWithoutResources(d, live); np != nil {
				return nil, hcl.Diagnostics{Warning(fmt.Sprintf("%s asks for nvidia.com/mig-<profile> resources, which the NVIDIA device plugin advertises only with MIG strategy mixed, and its nodes advertise none yet; gpuform sets the strategy in the GPU Operator's ClusterPolicy and the cluster has none: run the device plugin with MIG_STRATEGY=mixed", np.Address), np.Address)}, nil
			}
			return nil, nil, nil
		}
		verb := "needs"
		if len(needers) > 1 {
			verb = "need"
		}
		return nil, nil, fmt.Errorf("%s %s the NVIDIA GPU Operator (mig_backend = \"gpu-operator\"), but the cluster has no ClusterPolicy: install the GPU Operator, or set mig_backend = \"agent\" in the gpuform block and deploy examples/deploy/agent.yaml", strings.Join(needers, ", "), verb)
	}
	var out []*Change
	var warnings hcl.Diagnostics
	for _, cp := range live.ClusterPolicies {
		spec, w := policySpec(cp, want, neededBy)
		warnings = append(warnings, w...)
		keepOwned(cp, spec, dropping)
		if len(spec) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": cp.GetAPIVersion(), "kind": cp.GetKind(),
			"metadata": map[string]any{"name": cp.GetName()},
			"spec":     spec,
		}}
		fields := DiffFields(obj.Object, cp, FieldManager)
		if len(fields) == 0 {
			continue
		}
		out = append(out, &Change{Address: StackAddress, Key: KeyOf(cp), APIVersion: cp.GetAPIVersion(), Action: ActionUpdate, Before: cp, After: obj, Fields: fields,
			DependsOn: []Key{{Kind: "ConfigMap", Namespace: d.gpuOperatorNamespace(), Name: want["migManager"]}}})
	}
	return out, warnings, nil
}

// policyNeeders returns, per ClusterPolicy component (migManager,
// devicePlugin, mig), the first pool that needs it, and the pools that
// need the GPU Operator (MIG on its backend, time-slicing).
func policyNeeders(d *Desired) (map[string]string, []string) {
	neededBy := map[string]string{}
	var needers []string
	for _, np := range d.Pools {
		if np.MIGState == LabelMIGState || np.Labels[LabelDPConfig] != "" {
			needers = append(needers, np.Address)
		}
		if np.MIGState == LabelMIGState && neededBy["migManager"] == "" {
			neededBy["migManager"] = np.Address
		}
		if np.Labels[LabelDPConfig] != "" && neededBy["devicePlugin"] == "" {
			neededBy["devicePlugin"] = np.Address
		}
		if np.MIGState != "" && neededBy["mig"] == "" {
			neededBy["mig"] = np.Address
		}
	}
	return neededBy, needers
}

// handBack is, per component, the config name gpuform sets when this
// stack deletes its ConfigMap there (its pools left the GPU Operator's
// mig-manager or device plugin): the GPU Operator's defaults, no name.
// Read from github.com/NVIDIA/gpu-operator (Apache License 2.0),
// controllers/object_controls.go: at v26.3.3 mig-manager without a name
// generates its configuration from the hardware, and any name (its old
// default ConfigMap's, default-mig-parted-config, too) is a custom
// configuration that turns that off; at v25.3.4 no name reads that
// default ConfigMap.
var handBack = map[string]string{"migManager": "", "devicePlugin": ""}

// ownConfig is gpuform's ConfigMap of each component.
var ownConfig = map[string]string{"migManager": MIGPartedConfig, "devicePlugin": DevicePluginConf}

// keepOwned adds to spec every field of cp's spec that gpuform applied
// before and spec no longer sets, with its current value, or, for a config
// name this stack's deleted ConfigMap (dropping), the GPU Operator's
// default. gpuform never drops a ClusterPolicy field: server-side apply
// would leave its parent empty (config: {}, mig: {}), write it as null,
// and the ClusterPolicy schema refuses null there, so the apply would fail.
func keepOwned(cp *unstructured.Unstructured, spec map[string]any, dropping map[string]bool) {
	for _, path := range removedPaths(cp, map[string]any{"spec": spec}, FieldManager) {
		if len(path) < 2 || path[0] != "spec" {
			continue
		}
		cur, ok := getPath(cp.Object, path)
		if !ok {
			continue
		}
		if len(path) == 4 && path[2] == "config" && path[3] == "name" && dropping[path[1]] && cur == ownConfig[path[1]] {
			cur = handBack[path[1]]
		}
		m := spec
		for _, p := range path[1 : len(path)-1] {
			sub, _ := m[p].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[path[len(path)-1]] = cur
	}
}

// policySpec is the part of ClusterPolicy cp's spec gpuform sets, with a
// warning for each value it changes that another tool set.
func policySpec(cp *unstructured.Unstructured, want, neededBy map[string]string) (map[string]any, hcl.Diagnostics) {
	spec := map[string]any{}
	var warnings hcl.Diagnostics
	for _, component := range []string{"migManager", "devicePlugin"} {
		name := want[component]
		cur, _, _ := unstructured.NestedString(cp.Object, "spec", component, "config", "name")
		if name == "" {
			continue
		}
		spec[component] = map[string]any{"config": map[string]any{"name": name}}
		if cur != "" && cur != name {
			warnings = append(warnings, Warning(fmt.Sprintf("ClusterPolicy %s points %s at ConfigMap %q; gpuform will point it at %q, where the configuration's layouts are", cp.GetName(), component, cur, name), neededBy[component]))
		}
	}
	if neededBy["mig"] != "" {
		spec["mig"] = map[string]any{"strategy": MIGStrategyMixed}
		if cur, _, _ := unstructured.NestedString(cp.Object, "spec", "mig", "strategy"); cur != "" && cur != MIGStrategyMixed {
			warnings = append(warnings, Warning(fmt.Sprintf("ClusterPolicy %s sets mig.strategy %q; gpuform will set %q, under which the device plugin advertises the nvidia.com/mig-<profile> resources the configuration asks for (MIG nodes outside gpuform's pools then advertise them too, instead of nvidia.com/gpu)", cp.GetName(), cur, MIGStrategyMixed), neededBy["mig"]))
		}
	}
	return spec, warnings
}

// migPoolWithoutResources returns the first MIG pool none of whose nodes
// (by its node selector) advertises a nvidia.com/mig-<profile> resource,
// or nil.
func migPoolWithoutResources(d *Desired, live *Live) *NodePool {
	for _, np := range d.Pools {
		if np.MIGState == "" {
			continue
		}
		found := false
		for _, n := range live.Nodes {
			if !capacity.SelectsNode(np.Selector, n) {
				continue
			}
			capacity, _, _ := unstructured.NestedMap(n.Object, "status", "capacity")
			for r := range capacity {
				found = found || strings.HasPrefix(r, "nvidia.com/mig-")
			}
		}
		if !found {
			return np
		}
	}
	return nil
}
