package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/engine/capacity"
)

// SafetyOptions are the limits a plan must respect to be applied.
type SafetyOptions struct {
	// AllowDestroy permits deleting protected tenants' namespaces and more
	// than MaxDeletes objects.
	AllowDestroy bool
	// MaxDeletes is the most deletes allowed without AllowDestroy.
	MaxDeletes int
	// AllowDisruption permits re-partitioning nodes whose GPUs are in use.
	AllowDisruption bool
}

// DefaultMaxDeletes is --max-deletes' default.
const DefaultMaxDeletes = 10

// Unsafe returns why p may not be applied with opts: protected namespaces
// it would delete, or more deletes than allowed. Empty means safe.
func Unsafe(p *Plan, opts SafetyOptions) []string {
	var out []string
	if !opts.AllowDisruption && len(p.Disruption) > 0 {
		nodes := slices.Sorted(maps.Keys(p.Disruption))
		out = append(out, fmt.Sprintf("the plan re-partitions the MIG layout of, or moves between the device plugin and DRA, %s, where pods use the GPUs (listed above); drain them first, or apply with --allow-disruption", strings.Join(nodes, ", ")))
	}
	if p.Destroy {
		// A destroy is all deletes: neither limit yields to --allow-destroy.
		return append(out, destroyUnsafe(p, opts.MaxDeletes)...)
	}
	if opts.AllowDestroy {
		return out
	}
	if protected := protectedDeletes(p); len(protected) > 0 {
		out = append(out, fmt.Sprintf("the plan deletes the namespace of protected tenants: %s. Deleting a namespace deletes everything in it; set protect = false on the tenant first, or apply with --allow-destroy", strings.Join(protected, ", ")))
	}
	if p.Summary.Destroy > opts.MaxDeletes {
		out = append(out, fmt.Sprintf("the plan deletes %d objects, more than --max-deletes=%d; check that the configuration is the one you mean, then apply with --allow-destroy or a higher --max-deletes", p.Summary.Destroy, opts.MaxDeletes))
	}
	return out
}

// destroyUnsafe is why the destroy plan p may not be applied: a protected
// tenant's namespace (never deleted by a destroy), or more deletes than
// maxDeletes, which a destroy must be given explicitly.
func destroyUnsafe(p *Plan, maxDeletes int) []string {
	var out []string
	if protected := protectedDeletes(p); len(protected) > 0 {
		out = append(out, ProtectedReason(protected))
	}
	if p.Summary.Destroy > maxDeletes {
		out = append(out, fmt.Sprintf("the destroy plan deletes %d objects, more than --max-deletes=%d; check the plan, then run it with --max-deletes %d", p.Summary.Destroy, maxDeletes, p.Summary.Destroy))
	}
	return out
}

// protectedDeletes names the protected namespaces p deletes (their live
// gpuform.dev/protect annotation), with their addresses.
func protectedDeletes(p *Plan) []string {
	var protected []string
	for _, c := range p.Changes {
		if c.Action == ActionDelete && c.Key.Kind == "Namespace" && c.Key.Group == "" && c.Before != nil && c.Before.GetAnnotations()[AnnotProtect] == "true" {
			protected = append(protected, fmt.Sprintf("%s (%s)", c.Key.Name, c.Address))
		}
	}
	return protected
}

// DisruptionWarnings words p.Disruption for the plan's warnings, each about
// the pool whose change re-partitions the node.
func DisruptionWarnings(p *Plan) hcl.Diagnostics {
	nodes := slices.Sorted(maps.Keys(p.Disruption))
	pool := map[string]string{} // node -> the address of the change that re-partitions it
	for _, c := range p.Changes {
		if c.Wait != "" && pool[c.Key.Name] == "" {
			pool[c.Key.Name] = c.Address
		}
	}
	var out hcl.Diagnostics
	for _, n := range nodes {
		if pool[n] == "" {
			continue // not re-partitioned: a pool's move (ModeSwitchWarnings)
		}
		out = append(out, Warning(fmt.Sprintf("Re-partitioning node %s disrupts the pods using its GPUs: %s", n, strings.Join(p.Disruption[n], ", ")), pool[n]))
	}
	return out
}

// ModeSwitchWarnings say, for each pool whose GPUs move between the
// device plugin and DRA, what the move takes and which pods on its nodes
// (disruption: the pods using GPUs, by node) hold GPUs the other side
// could hand out again.
func ModeSwitchWarnings(switches []capacity.ModeSwitch, disruption map[string][]string) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, sw := range switches {
		var msg string
		if sw.ToDRA {
			msg = fmt.Sprintf("Pool %s moves from the device plugin to DRA: run NVIDIA's DRA driver on its nodes (%s) and stop the device plugin there; its models restart with ResourceClaimTemplates, and its tenants' quotas move to its DeviceClasses", sw.Pool.Name, strings.Join(sw.Nodes, ", "))
		} else {
			msg = fmt.Sprintf("Pool %s moves from DRA to the device plugin: run the device plugin on its nodes (%s) and stop NVIDIA's DRA driver there; its models restart with extended resources, its DeviceClasses are deleted, and its tenants' quotas move to its resources", sw.Pool.Name, strings.Join(sw.Nodes, ", "))
		}
		var pods []string
		for _, n := range sw.Nodes {
			for _, pod := range disruption[n] {
				pods = append(pods, n+": "+pod)
			}
		}
		if len(pods) > 0 {
			msg += fmt.Sprintf(". Pods using its GPUs until then keep them while the other side may hand them out again: %s", strings.Join(pods, ", "))
		}
		out = append(out, Warning(msg, sw.Pool.Address))
	}
	return out
}

// RepartitionedNodes lists the nodes whose MIG layout the plan changes.
func RepartitionedNodes(p *Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if c.Wait != "" {
			out = append(out, c.Key.Name)
		}
	}
	return out
}
