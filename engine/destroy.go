package engine

import (
	"fmt"
	"strings"
)

// DestroyDesired is the desired state of a destroy of d's stack: nothing,
// so that a diff deletes every object the stack's record holds (and only
// those: an object with the stack's label the record lacks is reported,
// never deleted), takes the stack's labels off Nodes and its ConfigMaps
// out of the ClusterPolicy.
func DestroyDesired(d *Desired) *Desired {
	return &Desired{Stack: d.Stack, Kinds: d.Kinds, Sources: d.Sources, Registry: d.Registry}
}

// DestroyProtected names the namespaces the destroy plan p deletes that
// are protected, with their addresses: by d, the configuration (protect =
// true), or by the live namespace's mark (what the last apply wrote). A
// destroy refuses them (ProtectedReason) before it is saved or applied.
func DestroyProtected(d *Desired, p *Plan) []string {
	inConfig := map[Key]bool{}
	for _, o := range d.Objects {
		if k := o.Key(); isKind(k, KindNamespace) && o.Object.GetAnnotations()[AnnotProtect] == "true" {
			inConfig[k] = true
		}
	}
	var out []string
	for _, c := range p.Changes {
		marked := c.Before != nil && c.Before.GetAnnotations()[AnnotProtect] == "true"
		if c.Action == ActionDelete && isKind(c.Key, KindNamespace) && (inConfig[c.Key] || marked) {
			out = append(out, fmt.Sprintf("%s (%s)", c.Key.Name, c.Address))
		}
	}
	return out
}

// ProtectedReason is the refusal of a destroy of the protected namespaces
// named.
func ProtectedReason(names []string) string {
	return fmt.Sprintf("the destroy plan deletes the namespace of protected tenants: %s. A destroy never deletes a protected tenant: set protect = false on the tenant and apply, then destroy", strings.Join(names, ", "))
}
