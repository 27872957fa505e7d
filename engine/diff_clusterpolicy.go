package engine

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DiffClusterPolicies points the GPU Operator at gpuform's mig-parted and
// device-plugin ConfigMaps. With MIG or time-slicing pools on the
// gpu-operator backend, a cluster without a ClusterPolicy is an error. A
// ClusterPolicy pointed at another ConfigMap is a warning about the first
// pool that needs the component (see Warning).
func DiffClusterPolicies(d *Desired, live *Live) ([]*Change, hcl.Diagnostics, error) {
	want := map[string]string{} // spec path component -> ConfigMap name
	var needers []string
	for _, o := range d.Objects {
		switch o.Key() {
		case Key{Kind: "ConfigMap", Namespace: o.Object.GetNamespace(), Name: MIGPartedConfig}:
			want["migManager"] = MIGPartedConfig
		case Key{Kind: "ConfigMap", Namespace: o.Object.GetNamespace(), Name: DevicePluginConf}:
			want["devicePlugin"] = DevicePluginConf
		}
	}
	if len(want) == 0 {
		return nil, nil, nil
	}
	neededBy := map[string]string{} // component -> the first pool that needs it
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
	}
	if len(live.ClusterPolicies) == 0 {
		verb := "needs"
		if len(needers) > 1 {
			verb = "need"
		}
		return nil, nil, fmt.Errorf("%s %s the NVIDIA GPU Operator (mig_backend = \"gpu-operator\"), but the cluster has no ClusterPolicy: install the GPU Operator, or set mig_backend = \"agent\" in the gpuform block and deploy examples/deploy/agent.yaml", strings.Join(needers, ", "), verb)
	}
	var out []*Change
	var warnings hcl.Diagnostics
	for _, cp := range live.ClusterPolicies {
		spec := map[string]any{}
		for component, name := range want {
			spec[component] = map[string]any{"config": map[string]any{"name": name}}
			if cur, _, _ := unstructured.NestedString(cp.Object, "spec", component, "config", "name"); cur != "" && cur != name {
				warnings = append(warnings, Warning(fmt.Sprintf("ClusterPolicy %s points %s at ConfigMap %q; gpuform will point it at %q, where the configuration's layouts are", cp.GetName(), component, cur, name), neededBy[component]))
			}
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
