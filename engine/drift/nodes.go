package drift

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// failedMIG reports the nodes of MIG pools whose state is failed and that
// the plan did not already report (the plan re-waits a failed node only
// when nothing else about it changes).
func (x *drifter) failedMIG(hw map[string]*Item) {
	for _, n := range x.live.Nodes {
		if hw[n.GetName()] != nil {
			continue
		}
		for _, np := range x.desired.Pools {
			if np.MIGState == "" || !capacity.SelectsNode(np.Selector, n) {
				continue
			}
			state := n.GetLabels()[np.MIGState]
			if np.MIGState == agentv1.AnnotMIGState {
				state = n.GetAnnotations()[np.MIGState]
			}
			if strings.HasPrefix(state, "failed") {
				hw[n.GetName()] = &Item{Class: Hardware, Address: np.Address, APIVersion: "v1", Kind: "Node", Name: n.GetName(), Fields: []engine.FieldDiff{},
					Details: []string{fmt.Sprintf("MIG state %s is %q: the last re-partitioning failed; see the GPU Operator's mig-manager (or gpuform agent) logs on the node", np.MIGState, state)}}
			}
		}
	}
}

// isMIGField reports whether a node field is a MIG layout label or annotation.
func isMIGField(path string) bool {
	return strings.Contains(path, engine.LabelMIGConfig+`"`) || strings.Contains(path, agentv1.AnnotMIGLayout)
}

// isMIGStateField reports whether a node field is a MIG state label or annotation.
func isMIGStateField(path string) bool {
	return path == engine.MIGStatePath(engine.LabelMIGState) || path == engine.MIGStatePath(agentv1.AnnotMIGState)
}

// node classifies a node's label and annotation changes against the newest
// configuration applied to the stack. Hardware findings go into hw by node.
func (x *drifter) node(c *engine.Change, hw map[string]*Item) {
	s := x.stackNewest()
	hardware := func(f engine.FieldDiff, detail string) {
		it := hw[c.Key.Name]
		if it == nil {
			it = &Item{Class: Hardware, Address: c.Address, APIVersion: "v1", Kind: "Node", Name: c.Key.Name, Action: c.Action, AppliedCommit: s, Fields: []engine.FieldDiff{}}
			hw[c.Key.Name] = it
		}
		it.Action = c.Action
		it.Fields = append(it.Fields, f)
		it.Details = append(it.Details, detail)
	}
	if c.Action == engine.ActionConflict {
		selected := false
		if ds := x.desiredAt(s); ds != nil && !x.sameAsRef(s) {
			for _, np := range ds.Pools {
				if capacity.SelectsNode(np.Selector, c.Before) {
					selected = true
				}
			}
		}
		if selected {
			x.add(LiveEdit, c, s, nil, c.Reason)
		} else {
			x.add(Unapplied, c, s, nil, c.Reason)
		}
		return
	}
	var sFields []engine.FieldDiff
	known := false
	switch ds := x.desiredAt(s); {
	case x.sameAsRef(s):
		known = true // every difference from the ref is unexplained
	case ds != nil:
		if changes, err := engine.DiffNodes(ds, &engine.Live{Nodes: []*unstructured.Unstructured{c.Before}}, engine.DiffOptions{}); err == nil {
			known = true
			for _, sc := range changes {
				sFields = append(sFields, sc.Fields...)
			}
		}
	}
	var hand, unapplied []engine.FieldDiff
	for _, f := range c.Fields {
		switch {
		case isMIGStateField(f.Path):
			if state := fmt.Sprint(f.Before); strings.HasPrefix(state, "failed") {
				hardware(f, fmt.Sprintf("MIG state is %q: the last re-partitioning failed; apply marks the node pending and waits again", state))
			} else {
				hardware(f, fmt.Sprintf("MIG state is %q, not success: re-partitioning has not finished; apply waits for it", state))
			}
		case known && (x.sameAsRef(s) || overlaps(f.Path, sFields)) && isMIGField(f.Path):
			hardware(f, fmt.Sprintf("MIG configuration %s is %s, not the pool's layout %s, and not what was applied: changed on the node (by hand, or by the GPU Operator)", f.Path, engine.FormatValue(f.Before), engine.FormatValue(f.After)))
		case known && (x.sameAsRef(s) || overlaps(f.Path, sFields)):
			hand = append(hand, f)
		default:
			unapplied = append(unapplied, f)
		}
	}
	if len(hand) > 0 {
		x.add(LiveEdit, c, s, hand, "the node's pool labels or annotations were changed since "+ShortCommit(s)+" was applied; apply sets them back")
	}
	if len(unapplied) > 0 {
		x.add(Unapplied, c, s, unapplied, "the pool configuration at the ref labels the node differently from "+ShortCommit(s)+", the newest commit applied")
	}
}

// clusterPolicy classifies the GPU Operator's ClusterPolicy fields gpuform sets.
func (x *drifter) clusterPolicy(c *engine.Change) {
	s := x.stackNewest()
	if x.sameAsRef(s) {
		x.add(LiveEdit, c, s, c.Fields, "changed since "+ShortCommit(s)+" was applied; apply points it back at gpuform's ConfigMaps")
		return
	}
	if ds := x.desiredAt(s); ds != nil {
		if changes, _, err := engine.DiffClusterPolicies(ds, &engine.Live{ClusterPolicies: []*unstructured.Unstructured{c.Before}}); err == nil {
			var sFields []engine.FieldDiff
			for _, sc := range changes {
				sFields = append(sFields, sc.Fields...)
			}
			hand, unapplied := splitFields(c.Fields, sFields)
			if len(hand) > 0 {
				x.add(LiveEdit, c, s, hand, "changed since "+ShortCommit(s)+" was applied; apply points it back at gpuform's ConfigMaps")
			}
			if len(unapplied) > 0 {
				x.add(Unapplied, c, s, unapplied, "the configuration at the ref needs other GPU Operator ConfigMaps than "+ShortCommit(s))
			}
			return
		}
	}
	x.add(Unapplied, c, s, c.Fields, "the configuration at the ref needs other GPU Operator ConfigMaps")
}
