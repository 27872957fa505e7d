package engine

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/kinds"
)

// UntrustedPlanError is a saved plan with changes that the cluster, read
// under the lock, does not bear out: gpuform would not have planned them
// for its stack (a delete of an object the stack does not own, a create of
// one that exists, ...). Nothing was changed.
type UntrustedPlanError struct {
	// Stack is the plan's stack; Reasons name each refused change and why.
	Stack   string
	Reasons []string
}

// Error lists the refused changes (at most 20).
func (e *UntrustedPlanError) Error() string {
	reasons := e.Reasons
	if len(reasons) > 20 {
		reasons = append(reasons[:20:20], fmt.Sprintf("... and %d more", len(e.Reasons)-20))
	}
	return fmt.Sprintf("the saved plan has changes gpuform would not make to stack %s as the cluster is now, so nothing was changed (was the file edited?); make the plan again:\n  %s", e.Stack, strings.Join(reasons, "\n  "))
}

// Recheck holds every change of a saved plan against live, the cluster as
// a refresh read it under the stack's lock, never trusting the file for
// ownership or scope:
//
//   - a delete only of an object of a managed kind that the refresh read in
//     the stack and that the stack's record holds with its UID (Live.Owns,
//     the rule Diff's prunes follow), never of the lock's namespace;
//   - a create only of an object that does not exist; an update only of one
//     the stack owns; an adoption only of one it does not own, and only
//     with adopt (--adopt on the apply);
//   - a Node or ClusterPolicy change only of one the refresh read.
//
// It then binds the plan to what was read: each change's Before becomes
// the live object (so the safety limits read the live protect annotation
// and Node writes the live resourceVersion) and a delete's apiVersion the
// live one. reg says which kinds are managed; nil means kinds.Builtin().
// A refusal is an *UntrustedPlanError.
func Recheck(p *Plan, live *Live, reg *kinds.Registry, adopt bool) error {
	if reg == nil {
		reg = kinds.Builtin()
	}
	nodes := map[Key]*unstructured.Unstructured{}
	for _, n := range live.Nodes {
		nodes[KeyOf(n)] = n
	}
	for _, cp := range live.ClusterPolicies {
		nodes[KeyOf(cp)] = cp
	}
	var reasons []string
	for _, c := range p.Changes {
		if c.Action == ActionConflict {
			continue // never made
		}
		e, ok := reg.Lookup(groupKind(c.Key))
		var why string
		switch {
		case !ok || !e.Use.InPlan():
			why = "gpuform does not write this kind"
		case IsLockNamespace(c.Key):
			why = "it is the namespace of gpuform's lock, which no stack may own"
		case e.Use == kinds.Patched:
			why = recheckPatched(c, nodes[c.Key], adopt)
		default:
			why = recheckManaged(c, live, p.Stack, adopt)
		}
		if why != "" {
			reasons = append(reasons, fmt.Sprintf("%s %s: %s", c.Action, c.Key, why))
		}
	}
	if len(reasons) > 0 {
		return &UntrustedPlanError{Stack: p.Stack, Reasons: reasons}
	}
	return nil
}

// recheckPatched checks a change of a Node or ClusterPolicy against cur,
// the one the refresh read (nil: none), and binds it; adopt is --adopt. It
// returns why the
// change is refused, "" when it is not.
func recheckPatched(c *Change, cur *unstructured.Unstructured, adopt bool) string {
	switch {
	case c.Action != ActionUpdate && c.Action != ActionAdopt:
		return "gpuform never creates or deletes one"
	case c.Action == ActionAdopt && !adopt:
		return "the plan takes it over from another stack's pool; apply a plan that adopts objects with --adopt"
	case cur == nil:
		return "the refresh under the lock did not find it; gpuform never creates one"
	}
	c.Before = cur
	return ""
}

// recheckManaged checks a change of an object of a managed kind against
// the live state and binds it; it returns why the change is refused, ""
// when it is not.
func recheckManaged(c *Change, live *Live, stack string, adopt bool) string {
	cur, labelled := live.Objects[c.Key]
	owned := labelled && live.Owns(c.Key, cur, stack)
	if !labelled {
		cur = live.Foreign[c.Key]
	}
	switch c.Action {
	case ActionDelete:
		if !owned {
			return notOwnedWhy(labelled, live.Inventory != nil, stack)
		}
		if live.Inventory == nil {
			return "the stack has no inventory yet, and gpuform deletes only what its inventory holds"
		}
		if v := cur.GetAPIVersion(); v != "" {
			c.APIVersion = v
		}
	case ActionCreate:
		if cur != nil {
			return "it exists already, so creating it would take it over"
		}
		return ""
	case ActionUpdate:
		// An imported object is recorded before it carries the stack's label.
		if !owned && !(cur != nil && live.Owns(c.Key, cur, stack)) {
			return notOwnedWhy(labelled, live.Inventory != nil, stack)
		}
	case ActionAdopt:
		switch {
		case !adopt:
			return "the plan takes it over from its owner; apply a plan that adopts objects with --adopt"
		case owned:
			return "the stack owns it already"
		case cur == nil:
			return "it does not exist, so there is nothing to adopt"
		}
	}
	c.Before = cur
	return ""
}

// notOwnedWhy says why an object the stack does not own may not be deleted
// or updated; labelled is whether it carries the stack's label, recorded
// whether the stack has a record (without one, nothing is deleted).
func notOwnedWhy(labelled, recorded bool, stack string) string {
	switch {
	case labelled && recorded:
		return fmt.Sprintf("it carries the label %s=%s, but is not in the stack's inventory with its UID, so the stack does not own it", LabelStack, stack)
	case labelled:
		return fmt.Sprintf("it carries the label %s=%s, but gpuform never applied it (no field manager %s), so the stack does not own it", LabelStack, stack, FieldManager)
	}
	return fmt.Sprintf("the refresh under the lock did not find it in stack %s, so the stack does not own it", stack)
}
