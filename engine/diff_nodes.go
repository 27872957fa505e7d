package engine

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
)

// diffNodes computes the label and annotation changes pools ask of Nodes.
func DiffNodes(d *Desired, live *Live, opts DiffOptions) ([]*Change, error) {
	var out []*Change
	for _, n := range live.Nodes {
		var pools []*NodePool
		for _, np := range d.Pools {
			if capacity.SelectsNode(np.Selector, n) {
				pools = append(pools, np)
			}
		}
		if len(pools) > 1 {
			return nil, fmt.Errorf("node %s is selected by both %s and %s; a node belongs to one pool, so make their node_selector disjoint", n.GetName(), pools[0].Address, pools[1].Address)
		}
		want := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": n.GetName()},
		}}
		address := ""
		var deps []Key
		if len(pools) == 1 {
			np := pools[0]
			address, deps = np.Address, np.DependsOn
			meta := want.Object["metadata"].(map[string]any)
			if len(np.Labels) > 0 {
				meta["labels"] = AnyMap(np.Labels)
			}
			if len(np.Annotations) > 0 {
				meta["annotations"] = AnyMap(np.Annotations)
			}
		}
		manager := NodeFieldManager(d.Stack)
		fields := DiffFields(want.Object, n, manager)
		if len(fields) == 0 && len(pools) == 1 {
			fields = unfinishedMIG(pools[0], n)
		}
		// Every node a pool selects is checked for another stack's claim,
		// even one whose labels already match: two stacks' pools of the
		// same name write the same labels, and server-side apply lets both
		// managers own them without a conflict.
		other := ""
		if len(pools) == 1 {
			other = otherPoolOwner(n, manager)
		}
		if len(fields) == 0 && other == "" {
			continue
		}
		if address == "" {
			address = "pool (removed)"
		}
		c := &Change{Address: address, Key: KeyOf(n), APIVersion: "v1", Action: ActionUpdate, Before: n, After: want, Fields: fields, DependsOn: deps}
		if len(pools) == 1 && pools[0].MIGState != "" && (migChanged(fields) || fields[0].Path == MIGStatePath(pools[0].MIGState)) {
			c.Wait = pools[0].MIGState
			c.Throttle = pools[0].Address
		}
		if other != "" {
			if opts.Adopt {
				c.Action = ActionAdopt
			} else {
				c.Action, c.Fields = ActionConflict, nil
				c.Reason = fmt.Sprintf("node %s is already in a pool of gpuform stack %s (its %s label is owned by field manager %s); a node belongs to one pool of one stack, so narrow this pool's node_selector, or run with --adopt to move the node", n.GetName(), strings.TrimPrefix(other, nodeManagerPrefix), LabelPool, other)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// unfinishedMIG is the change a node needs when its layout is in place but
// its MIG state is not "success" (an earlier apply failed or is pending):
// apply marks it pending again and waits, so that models are not placed on
// slices that do not exist.
func unfinishedMIG(np *NodePool, n *unstructured.Unstructured) []FieldDiff {
	if np.MIGState == "" {
		return nil
	}
	state, ok := n.GetLabels()[np.MIGState]
	if np.MIGState == agentv1.AnnotMIGState {
		state, ok = n.GetAnnotations()[np.MIGState]
	}
	if !ok || state == "success" {
		return nil
	}
	return []FieldDiff{{Path: MIGStatePath(np.MIGState), Op: FieldChange, Before: state, After: "success"}}
}

// statePath is the field path of a MIG state label or annotation.
func MIGStatePath(key string) string {
	if key == agentv1.AnnotMIGState {
		return FormatPath([]string{"metadata", "annotations", key})
	}
	return FormatPath([]string{"metadata", "labels", key})
}

// migChanged reports whether a node change touches its MIG layout.
func migChanged(fields []FieldDiff) bool {
	for _, f := range fields {
		if f.Op == FieldRemove {
			continue
		}
		if strings.Contains(f.Path, LabelMIGConfig+`"`) || strings.Contains(f.Path, agentv1.AnnotMIGLayout) {
			return true
		}
		if m, ok := f.After.(map[string]any); ok {
			_, label := m[LabelMIGConfig]
			_, annotation := m[agentv1.AnnotMIGLayout]
			if label || annotation {
				return true
			}
		}
	}
	return false
}

// waitForNodes makes models on a pool depend on the re-partitioning of the
// pool's nodes, so they are applied once their MIG slices exist.
func waitForNodes(changes []*Change, d *Desired) {
	repartitioned := map[string][]Key{}
	for _, c := range changes {
		if c.Wait != "" {
			for _, np := range d.Pools {
				if np.Address == c.Address {
					repartitioned[np.Pool] = append(repartitioned[np.Pool], c.Key)
				}
			}
		}
	}
	if len(repartitioned) == 0 {
		return
	}
	for _, c := range changes {
		if c.After == nil || c.Key.Kind != "InferenceService" {
			continue
		}
		pool, _, _ := unstructured.NestedString(c.After.Object, "spec", "predictor", "nodeSelector", LabelPool)
		c.DependsOn = append(c.DependsOn, repartitioned[pool]...)
	}
}

// nodeManagerPrefix starts the field manager of every stack's node labels.
const nodeManagerPrefix = "gpuform-"

// NodeFieldManager is the field manager of a stack's labels on Nodes: one
// per stack, so that two stacks claiming one node conflict instead of
// silently taking turns.
func NodeFieldManager(stack string) string { return nodeManagerPrefix + stack }

// otherPoolOwner returns the field manager of another stack that owns the
// node's pool label, or "".
func otherPoolOwner(n *unstructured.Unstructured, mine string) string {
	for _, mf := range n.GetManagedFields() {
		if mf.Manager == mine || !strings.HasPrefix(mf.Manager, nodeManagerPrefix) || mf.FieldsV1 == nil {
			continue
		}
		if strings.Contains(string(mf.FieldsV1.Raw), `"f:`+LabelPool+`"`) {
			return mf.Manager
		}
	}
	return ""
}

// AnyMap is m as an unstructured object holds it.
func AnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
