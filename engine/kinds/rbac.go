package kinds

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Role is one of gpuform's RBAC roles, the ClusterRoles of
// examples/deploy/rbac (the agent's role is separate: it is not about
// these kinds).
type Role string

// gpuform's roles.
const (
	// RolePlan is what plan (and plan --base, render, inventory) needs:
	// read-only.
	RolePlan Role = "plan"
	// RoleApply is what apply (and drift --fix, force-unlock) needs,
	// exactly.
	RoleApply Role = "apply"
	// RoleDrift is what drift without --fix needs: read-only.
	RoleDrift Role = "drift"
)

// Roles returns every role, in a fixed order.
func Roles() []Role { return []Role{RolePlan, RoleApply, RoleDrift} }

// ClusterRoleName is the name of the role's ClusterRole: gpuform-<role>.
func (r Role) ClusterRoleName() string { return "gpuform-" + string(r) }

// Verbs is a set of RBAC verbs.
type Verbs uint16

// The RBAC verbs gpuform's roles grant.
const (
	VerbGet Verbs = 1 << iota
	VerbList
	VerbWatch
	VerbCreate
	VerbUpdate
	VerbPatch
	VerbDelete
	VerbBind

	// VerbsRead is get, list and watch: what a read-only role grants.
	VerbsRead = VerbGet | VerbList | VerbWatch

	allVerbs = VerbBind<<1 - 1
)

// verbName is the RBAC name of a single verb.
func verbName(v Verbs) string {
	switch v {
	case VerbGet:
		return "get"
	case VerbList:
		return "list"
	case VerbWatch:
		return "watch"
	case VerbCreate:
		return "create"
	case VerbUpdate:
		return "update"
	case VerbPatch:
		return "patch"
	case VerbDelete:
		return "delete"
	case VerbBind:
		return "bind"
	}
	return ""
}

// Strings returns the RBAC names of the verbs in v, in a fixed order (get,
// list, watch, create, update, patch, delete, bind).
func (v Verbs) Strings() []string {
	var out []string
	for b := VerbGet; b <= VerbBind; b <<= 1 {
		if v&b != 0 {
			out = append(out, verbName(b))
		}
	}
	return out
}

// Access is what each role needs on a kind.
type Access struct {
	Plan, Apply, Drift Verbs
	// ApplyStatus is what apply needs on the kind's status subresource.
	ApplyStatus Verbs
	// ResourceNames, when set, limit every grant on the kind to objects
	// of these names.
	ResourceNames []string
}

// For returns the verbs role r needs.
func (a Access) For(r Role) Verbs {
	switch r {
	case RolePlan:
		return a.Plan
	case RoleApply:
		return a.Apply
	case RoleDrift:
		return a.Drift
	}
	return 0
}

// Rules returns the ClusterRole rules of role r: for each kind, the verbs r
// needs on its resource. Kinds of one API group that need the same verbs
// (and resource names) share a rule; rules come in the order of their
// first kind in the registry, resources in the registry's order.
func (r *Registry) Rules(role Role) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	add := func(e Entry, resource string, verbs Verbs) {
		if verbs == 0 {
			return
		}
		i := slices.IndexFunc(out, func(p rbacv1.PolicyRule) bool {
			return p.APIGroups[0] == e.Group && slices.Equal(p.Verbs, verbs.Strings()) && slices.Equal(p.ResourceNames, e.Access.ResourceNames)
		})
		if i < 0 {
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{e.Group}, Verbs: verbs.Strings(), ResourceNames: slices.Clone(e.Access.ResourceNames)})
			i = len(out) - 1
		}
		out[i].Resources = append(out[i].Resources, resource)
	}
	for _, e := range r.entries {
		add(e, e.Resource, e.Access.For(role))
	}
	if role == RoleApply {
		for _, e := range r.entries {
			add(e, e.Resource+"/status", e.Access.ApplyStatus)
		}
	}
	return out
}
