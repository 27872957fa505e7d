// Package kinds is the registry of the Kubernetes kinds gpuform manages or
// reads: one entry per kind with its group, version and resource, its scope,
// whether its CRD may be absent, its apply rank, what to install when the
// cluster lacks it, what gpuform does with its objects, and the RBAC verbs
// each of gpuform's roles needs on it.
//
// Compilation (the kinds a stack owns), plan ordering, the missing-CRD hint
// of a diff, refresh, the check of a saved plan and the RBAC ClusterRoles of
// examples/deploy/rbac all read it. A Registry is a value: Builtin returns
// gpuform's, and a test can build one with an extra kind (Registry.With).
// It is a leaf package: it imports nothing of gpuform.
package kinds

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is an API kind with its scope: what a refresh lists and a plan
// names.
type Kind struct {
	schema.GroupVersionKind
	// Namespaced is true for namespaced kinds.
	Namespaced bool
	// Optional kinds come from CRDs (Kueue, Volcano, KServe, the GPU
	// Operator) that a cluster may not have.
	Optional bool
}

// Use is what gpuform does with the objects of a kind.
type Use int

// Uses of a kind.
const (
	// Managed objects belong to a stack: gpuform creates, updates and
	// prunes them, and refresh lists them by the stack label.
	Managed Use = iota + 1
	// Patched objects exist without gpuform (Nodes, the GPU Operator's
	// ClusterPolicy): gpuform reads all of them and sets some of their
	// fields, but never creates or deletes one.
	Patched
	// Read objects are only read (the Pods a MIG re-partitioning would
	// disrupt).
	Read
	// Auxiliary objects are not part of a plan: the lock's Lease, the
	// ClusterRoles a tenant's RoleBindings grant, the ResourceClaims a
	// quota's proof looks for. Only the RBAC roles name them.
	Auxiliary
)

// String is the use's name.
func (u Use) String() string {
	switch u {
	case Managed:
		return "managed"
	case Patched:
		return "patched"
	case Read:
		return "read"
	case Auxiliary:
		return "auxiliary"
	}
	return fmt.Sprintf("Use(%d)", int(u))
}

// InPlan reports whether changes to objects of the kind appear in plans.
func (u Use) InPlan() bool { return u == Managed || u == Patched }

// Entry is everything gpuform knows of one kind.
type Entry struct {
	Kind
	// Resource is the plural resource the API serves the kind as
	// ("resourcequotas"), as RBAC rules name it.
	Resource string
	// Use is what gpuform does with the kind's objects.
	Use Use
	// Rank orders the changes of a plan by kind: lower ranks are applied
	// first and deleted last (what others depend on comes first). Only
	// kinds in plans (Use.InPlan) have one that matters.
	Rank int
	// InstallHint says what to install when the cluster does not serve
	// the kind ("" for the default, DefaultInstallHint).
	InstallHint string
	// MinRelease is the oldest release of what serves the kind that serves
	// it at Version, with what gpuform writes ("Kueue v0.15"), for the
	// message when the cluster serves the kind only at other versions; ""
	// for the default, which names the version only.
	MinRelease string
	// Access is what each of gpuform's RBAC roles needs on the kind.
	Access Access
	// OwnedWhole kinds carry a tenant's limits (quota, admission policies
	// and their bindings, access, queues): gpuform owns all of such an
	// object's content, not only the fields it sets. A field another
	// field manager set outside metadata and status (or an owner
	// reference, by which the garbage collector could delete the object)
	// is drift and a plan change, and apply removes it (Target.ApplyWhole):
	// one added field (a scope selector, an always-false match condition,
	// an excluded resource) switches the control off.
	OwnedWhole bool
}

// GroupVersionResource is the resource the API serves the kind at, as a
// dynamic client names it.
func (e Entry) GroupVersionResource() schema.GroupVersionResource {
	return e.GroupVersion().WithResource(e.Resource)
}

// DefaultInstallHint is the install hint of a kind whose entry has none.
const DefaultInstallHint = "install the CRD that serves it"

// clone returns e with its own copies of its slices.
func (e Entry) clone() Entry {
	e.Access.ResourceNames = slices.Clone(e.Access.ResourceNames)
	return e
}

// check reports what is wrong with an entry.
func (e Entry) check() error {
	switch {
	case e.Kind.Kind == "" || e.Version == "":
		return fmt.Errorf("kind %q: a kind and a version are required", e.GroupVersionKind)
	case e.Resource == "" || e.Resource != strings.ToLower(e.Resource):
		return fmt.Errorf("kind %s: resource %q is not a lower-case plural", e.Kind.Kind, e.Resource)
	case e.Use < Managed || e.Use > Auxiliary:
		return fmt.Errorf("kind %s: unknown use %d", e.Kind.Kind, e.Use)
	case e.OwnedWhole && e.Use != Managed:
		return fmt.Errorf("kind %s: only a managed kind can be owned whole, not a %s one", e.Kind.Kind, e.Use)
	}
	for _, r := range Roles() {
		if v := e.Access.For(r); v&^allVerbs != 0 {
			return fmt.Errorf("kind %s: unknown verbs %#x for role %s", e.Kind.Kind, uint(v&^allVerbs), r)
		}
	}
	return nil
}

// Registry is an immutable set of kind entries, looked up by group and
// kind. Build one with New, Builtin or With.
type Registry struct {
	entries []Entry
	index   map[schema.GroupKind]int
	// unranked is the rank of kinds the registry does not know: after all
	// of its own.
	unranked int
}

// New builds a registry of entries (kept in the order given), refusing an
// invalid entry or two entries of one group and kind.
func New(entries ...Entry) (*Registry, error) {
	r := &Registry{entries: make([]Entry, 0, len(entries)), index: make(map[schema.GroupKind]int, len(entries))}
	for _, e := range entries {
		if err := e.check(); err != nil {
			return nil, err
		}
		gk := e.GroupKind()
		if _, dup := r.index[gk]; dup {
			return nil, fmt.Errorf("kind %s is in the registry twice", gk)
		}
		r.index[gk] = len(r.entries)
		r.entries = append(r.entries, e.clone())
		if e.Use.InPlan() {
			r.unranked = max(r.unranked, e.Rank+1)
		}
	}
	return r, nil
}

// Builtin returns the registry of the kinds gpuform manages and reads.
func Builtin() *Registry {
	r, err := New(builtin()...)
	if err != nil {
		panic("kinds: the builtin table is invalid: " + err.Error())
	}
	return r
}

// With returns a new registry of r's entries followed by extra.
func (r *Registry) With(extra ...Entry) (*Registry, error) {
	return New(append(r.Entries(), extra...)...)
}

// Entries returns every entry, in the registry's order.
func (r *Registry) Entries() []Entry {
	out := make([]Entry, len(r.entries))
	for i, e := range r.entries {
		out[i] = e.clone()
	}
	return out
}

// Lookup returns the entry of a group and kind.
func (r *Registry) Lookup(gk schema.GroupKind) (Entry, bool) {
	i, ok := r.index[gk]
	if !ok {
		return Entry{}, false
	}
	return r.entries[i].clone(), true
}

// Managed returns the kinds a stack may own, in apply order (by rank, then
// the registry's order): what refresh lists with the stack label.
func (r *Registry) Managed() []Kind {
	var es []Entry
	for _, e := range r.entries {
		if e.Use == Managed {
			es = append(es, e)
		}
	}
	slices.SortStableFunc(es, func(a, b Entry) int { return a.Rank - b.Rank })
	out := make([]Kind, len(es))
	for i, e := range es {
		out[i] = e.Kind
	}
	return out
}

// InPlan reports whether the registry has the kind and its changes appear
// in plans (Managed or Patched): the kinds a saved plan may change.
func (r *Registry) InPlan(gk schema.GroupKind) bool {
	i, ok := r.index[gk]
	return ok && r.entries[i].Use.InPlan()
}

// Rank is the apply rank of a kind in plans; kinds the registry does not
// know rank after all of its own.
func (r *Registry) Rank(gk schema.GroupKind) int {
	if i, ok := r.index[gk]; ok && r.entries[i].Use.InPlan() {
		return r.entries[i].Rank
	}
	return r.unranked
}

// OwnedWhole reports whether gpuform owns the objects of a kind whole (see
// Entry.OwnedWhole).
func (r *Registry) OwnedWhole(gk schema.GroupKind) bool {
	i, ok := r.index[gk]
	return ok && r.entries[i].OwnedWhole
}

// UpgradeHint says what to upgrade when the cluster serves a kind, but not
// at the version gpuform writes.
func (r *Registry) UpgradeHint(k Kind) string {
	if i, ok := r.index[k.GroupKind()]; ok && r.entries[i].MinRelease != "" {
		return fmt.Sprintf("upgrade to %s or later (gpuform writes %s)", r.entries[i].MinRelease, k.GroupVersion())
	}
	return fmt.Sprintf("upgrade what serves %s to a release that serves %s", k.Kind, k.GroupVersion())
}

// InstallHint says what to install when the cluster does not serve a kind.
func (r *Registry) InstallHint(gk schema.GroupKind) string {
	if i, ok := r.index[gk]; ok && r.entries[i].InstallHint != "" {
		return r.entries[i].InstallHint
	}
	return DefaultInstallHint
}
