package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// RuntimeClassWarnings warns, per tenant, of each runtime_class that names
// no RuntimeClass of the cluster: the API server refuses every pod that
// names a missing RuntimeClass, and the tenant's pods must name one of
// its classes. Nothing when live has no RuntimeClasses read.
func RuntimeClassWarnings(cfg *config.Config, live *Live) hcl.Diagnostics {
	if live == nil || live.RuntimeClasses == nil {
		return nil
	}
	var out hcl.Diagnostics
	for _, t := range cfg.Tenants {
		for _, rc := range t.RuntimeClasses {
			if live.RuntimeClasses[rc] {
				continue
			}
			d := Warning(fmt.Sprintf("RuntimeClass %s not found: %s's pods must run in it (runtime_class), and the API server refuses pods that name a missing RuntimeClass; install the runtime that provides it (gVisor, Kata Containers) or change runtime_class", rc, t.Address), t.Address)
			out = append(out, d)
		}
	}
	return out
}

// TaintWarnings warns of each node of a pool that lacks one of the taints
// the pool declares (same key, value and effect): gpuform does not set
// taints, and without it pods of tenants without the toleration can be
// scheduled on the node.
func TaintWarnings(cfg *config.Config, live *Live) hcl.Diagnostics {
	if live == nil {
		return nil
	}
	var out hcl.Diagnostics
	for _, p := range cfg.Pools {
		if len(p.Taints) == 0 {
			continue
		}
		for _, n := range live.Nodes {
			if !capacity.SelectsNode(p.NodeSelector, n) {
				continue
			}
			have := nodeTaints(n)
			for _, t := range p.Taints {
				if have[[3]string{t.Key, t.Value, t.Effect}] {
					continue
				}
				out = append(out, Warning(fmt.Sprintf("Node %s of %s lacks taint %s: pods without its toleration can be scheduled there; gpuform does not set taints, so give the node the taint where it is made (kubelet --register-with-taints, the node group's taints)", n.GetName(), p.Address, taintString(t)), p.Address))
			}
		}
	}
	return out
}

// nodeTaints are the key, value and effect of node n's taints.
func nodeTaints(n *unstructured.Unstructured) map[[3]string]bool {
	list, _, _ := unstructured.NestedSlice(n.Object, "spec", "taints")
	out := make(map[[3]string]bool, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		key, _ := m["key"].(string)
		value, _ := m["value"].(string)
		effect, _ := m["effect"].(string)
		out[[3]string{key, value, effect}] = true
	}
	return out
}

// taintString writes a taint as kubectl taint does: key=value:Effect.
func taintString(t *config.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}
