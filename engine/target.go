package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TargetError is a --target address that no block of the configuration
// has and no change of the plan names.
type TargetError struct {
	// Address is the unknown address; Known are those the plan could take.
	Address string
	Known   []string
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("no block at --target address %q; the configuration has: %s", e.Address, strings.Join(e.Known, ", "))
}

// Narrow narrows p to the blocks at targets (their config addresses, as
// plans print them: tenant.NAME, pool.NAME, model.NAME, gpuform) and what
// they depend on, as Terraform's -target does. d is the configuration's
// desired state. Access never comes without its enforcement: a block with
// a RoleBinding brings the stack's admission policies and their bindings
// (its quota and queues are of its own block), and what those depend on.
// A destroy plan (p.Destroy) keeps the deletes of the targeted blocks and
// what depends on them instead: deleting enforcement (an admission policy,
// its binding, a tenant's ResourceQuota) deletes the access it guards (the
// RoleBindings it covers) in the same plan. The summary is counted again;
// an address neither d nor p knows is a *TargetError.
func Narrow(p *Plan, d *Desired, targets []string) error {
	if len(targets) == 0 {
		return nil
	}
	want := map[string]bool{}
	known := knownAddresses(p, d)
	for _, t := range targets {
		if !slices.Contains(known, t) {
			return &TargetError{Address: t, Known: known}
		}
		want[t] = true
	}
	var keep func(*Change) bool
	if p.Destroy {
		keep = func(c *Change) bool { return want[c.Address] }
	} else {
		keys := targetClosure(d, want)
		keep = func(c *Change) bool { return want[c.Address] || keys[c.Key] }
	}
	var kept []*Change
	for _, c := range p.Changes {
		if keep(c) {
			kept = append(kept, c)
		}
	}
	kept = withGuardedAccess(p.Changes, kept)
	p.Changes = kept
	p.Targets = slices.Clone(targets)
	p.Summary = Summary{Unchanged: p.Summary.Unchanged}
	p.Summary.count(p.Changes)
	return nil
}

// knownAddresses are the addresses a target may name: d's blocks and the
// plan's changes (a removed block's deletes), sorted.
func knownAddresses(p *Plan, d *Desired) []string {
	set := map[string]bool{}
	for _, o := range d.Objects {
		set[o.Address] = true
	}
	for _, np := range d.Pools {
		set[np.Address] = true
	}
	for _, c := range p.Changes {
		if c.Address != "" {
			set[c.Address] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// targetClosure is the keys of d's objects at the wanted addresses, the
// stack's admission policies and bindings when one of them grants access,
// and everything those depend on.
func targetClosure(d *Desired, want map[string]bool) map[Key]bool {
	byKey := d.index()
	keys := map[Key]bool{}
	var stack []Key
	add := func(k Key) {
		if !keys[k] {
			keys[k] = true
			stack = append(stack, k)
		}
	}
	grants := false
	for _, o := range d.Objects {
		if want[o.Address] {
			add(o.Key())
			grants = grants || isKind(o.Key(), KindRoleBinding)
		}
	}
	for _, np := range d.Pools {
		if want[np.Address] {
			for _, k := range np.DependsOn {
				add(k)
			}
		}
	}
	if grants {
		for _, o := range d.Objects {
			if isEnforcement(o.Key()) {
				add(o.Key())
			}
		}
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if o := byKey[k]; o != nil {
			for _, dep := range o.DependsOn {
				add(dep)
			}
		}
	}
	return keys
}

// withGuardedAccess adds to kept, from all, the deletes of the
// RoleBindings whose enforcement kept deletes: every RoleBinding when a
// stack-wide admission policy or binding goes, those of a namespace when
// its ResourceQuota goes. Order is all's.
func withGuardedAccess(all, kept []*Change) []*Change {
	stackWide, namespaces := false, map[string]bool{}
	in := map[*Change]bool{}
	for _, c := range kept {
		in[c] = true
		if c.Action != ActionDelete {
			continue
		}
		switch {
		case isKind(c.Key, KindResourceQuota):
			namespaces[c.Key.Namespace] = true
		case isEnforcement(c.Key):
			stackWide = true
		}
	}
	var out []*Change
	for _, c := range all {
		if in[c] || (c.Action == ActionDelete && isKind(c.Key, KindRoleBinding) && (stackWide || namespaces[c.Key.Namespace])) {
			out = append(out, c)
		}
	}
	return out
}

// isEnforcement reports whether k is an admission policy or binding: what
// the stack enforces on its tenants' requests.
func isEnforcement(k Key) bool {
	return isKind(k, KindVAP) || isKind(k, KindVAPBinding) || isKind(k, KindMAP) || isKind(k, KindMAPBinding)
}

// isKind reports whether k is of kind.
func isKind(k Key, kind Kind) bool {
	return k.Group == kind.Group && k.Kind == kind.Kind
}
