package engine

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/kinds"
)

// nodeKeys are the labels and the annotations gpuform sets on Nodes (a
// pool's, its GPU Operator MIG config and device-plugin config, mig-manager
// turned off on the agent backend's nodes, the agent's
// layout): all a saved plan may set on one. The MIG state apply marks
// pending is not among them: apply adds it (Change.Wait).
var nodeKeys = map[string]map[string]bool{
	"labels":      {LabelPool: true, LabelMIGConfig: true, LabelDPConfig: true, LabelDeployMIGManager: true},
	"annotations": {agentv1.AnnotMIGLayout: true},
}

// check refuses a plan file with a change gpuform cannot have planned (see
// SavedChange.check) or a throttle that would stop or crash the apply.
func (pf *PlanFile) check(reg *kinds.Registry) error {
	for group, n := range pf.Throttles {
		if n < 1 {
			return fmt.Errorf("throttle %q is %d; a pool's max_unavailable is at least 1", group, n)
		}
	}
	for i := range pf.Changes {
		sc := &pf.Changes[i]
		// Names before anything prints the key: a name gpuform cannot
		// have planned may hold terminal escapes.
		if len(validation.IsDNS1123Subdomain(sc.Key.Name)) > 0 || sc.Key.Namespace != "" && len(validation.IsDNS1123Label(sc.Key.Namespace)) > 0 {
			return fmt.Errorf("change %d: the object %q in namespace %q is not a name gpuform gives", i+1, sc.Key.Name, sc.Key.Namespace)
		}
		if err := sc.check(reg, pf.Stack); err != nil {
			return fmt.Errorf("change %d (%s): %w", i+1, sc.Key, err)
		}
	}
	return nil
}

// check refuses a saved change that gpuform cannot have written: an unknown
// action, one without the object it applies or reports on, one on a kind
// gpuform does not write or on the lock's namespace, one whose object is not
// the one its key names, a managed object without the stack's labels, a
// Node or ClusterPolicy change that creates, deletes or sets more than
// gpuform sets, and a wait for something other than a Node's MIG state
// (reg says which kinds gpuform writes and owns). The checksum is not a
// signature (whoever edits the file can recompute it), so these bound what
// an edited unsigned plan file can make apply do to what gpuform itself
// could plan; Recheck then holds every change against the cluster.
func (sc *SavedChange) check(reg *kinds.Registry, stack string) error {
	switch sc.Action {
	case ActionCreate, ActionUpdate:
		if len(sc.After) == 0 {
			return fmt.Errorf("a %s without the object to apply", sc.Action)
		}
	case ActionAdopt:
		if len(sc.After) == 0 || len(sc.Before) == 0 {
			return errors.New("an adopt without the object to apply and the one it takes over")
		}
	case ActionDelete, ActionConflict:
	default:
		return fmt.Errorf("unknown action %q", sc.Action)
	}
	e, ok := reg.Lookup(groupKind(sc.Key))
	switch {
	case !ok || !e.Use.InPlan():
		return fmt.Errorf("a change of a %s, a kind gpuform does not write", sc.Key.Kind)
	case IsLockNamespace(sc.Key):
		return errors.New("a change of the namespace of gpuform's lock, which no stack may own")
	case e.Use == kinds.Patched && (sc.Action == ActionCreate || sc.Action == ActionDelete):
		return fmt.Errorf("a %s of a %s; gpuform never creates or deletes one", sc.Action, sc.Key.Kind)
	case sc.Wait != "" && (sc.Key != Key{Kind: "Node", Name: sc.Key.Name} || sc.Wait != LabelMIGState && sc.Wait != agentv1.AnnotMIGState):
		return fmt.Errorf("a wait for %q, which is not a Node's MIG state", sc.Wait)
	}
	if len(sc.After) == 0 {
		return nil
	}
	after := &unstructured.Unstructured{Object: sc.After}
	if k := KeyOf(after); k != sc.Key {
		return fmt.Errorf("the object it applies is %s, not the one its key names", k)
	}
	switch {
	case e.Use == kinds.Managed:
		if l := after.GetLabels(); l[LabelManagedBy] != ManagedByValue || l[LabelStack] != stack {
			return fmt.Errorf("the object it applies is not labelled %s=%s and %s=%s", LabelManagedBy, ManagedByValue, LabelStack, stack)
		}
		return nil
	case sc.Key.Kind == "Node" && sc.Key.Group == "":
		return checkNodeObject(sc.After)
	case groupKind(sc.Key) == KindClusterPolicy.GroupKind():
		return checkClusterPolicyObject(sc.After)
	}
	return fmt.Errorf("a change of a %s, whose fields gpuform does not know", sc.Key.Kind)
}

// checkNodeObject refuses a Node object that sets more than DiffNodes sets:
// its name and gpuform's labels and annotations (nodeKeys). A spec, a
// taint or another label would reach the Node as they are.
func checkNodeObject(obj map[string]any) error {
	for k := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			return fmt.Errorf("it sets %q of a Node; gpuform sets only its pool's labels and annotations", k)
		}
	}
	md, _ := obj["metadata"].(map[string]any)
	for k, v := range md {
		if k == "name" {
			continue
		}
		allowed, ok := nodeKeys[k]
		m, isMap := v.(map[string]any)
		if !ok || !isMap && v != nil {
			return fmt.Errorf("it sets metadata.%q of a Node; gpuform sets only its pool's labels and annotations", k)
		}
		for key := range m {
			if !allowed[key] {
				return fmt.Errorf("it sets the Node's %s %q, which gpuform does not write", k[:len(k)-1], key)
			}
		}
	}
	return nil
}

// checkClusterPolicyObject refuses a ClusterPolicy object other than what
// DiffClusterPolicies makes: its name; mig-manager's and the device
// plugin's ConfigMaps pointed at gpuform's (or handed back to the
// operator's default when the stack deletes its own); and the MIG
// strategy. Anything else of it (a driver image, say) would run on every
// GPU node.
func checkClusterPolicyObject(obj map[string]any) error {
	refuse := fmt.Errorf("it sets more of a ClusterPolicy than the ConfigMaps of mig-manager (%s) and the device plugin (%s) and the MIG strategy", MIGPartedConfig, DevicePluginConf)
	md, _ := obj["metadata"].(map[string]any)
	if len(obj) != 4 || len(md) != 1 || md["name"] == nil {
		return refuse
	}
	spec, _ := obj["spec"].(map[string]any)
	for key, v := range spec {
		if !clusterPolicyValueWritten(key, v) {
			return refuse
		}
	}
	return nil
}

// clusterPolicyValueWritten reports whether spec.<key> = v is a value
// gpuform writes into a ClusterPolicy.
func clusterPolicyValueWritten(key string, v any) bool {
	if key == "mig" {
		m, _ := v.(map[string]any)
		strategy, _ := m["strategy"].(string)
		return len(m) == 1 && (strategy == MIGStrategyMixed || strategy == "single")
	}
	own, ok := ownConfig[key]
	if !ok {
		return false
	}
	m, _ := v.(map[string]any)
	cfg, _ := m["config"].(map[string]any)
	name, isString := cfg["name"].(string)
	return len(m) == 1 && len(cfg) == 1 && isString && (name == own || name == handBack[key])
}
