package capacity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// maxNamed is how many devices an error names before it counts the rest.
const maxNamed = 5

// draOutside refuses DRA pool p when NVIDIA's DRA driver publishes, on a
// node the pool does not select, a device that one of the pool's
// DeviceClasses selects: a DeviceClass selects devices by what the driver
// publishes of them (type, product, MIG profile), not by node, so a
// tenant's quota on the pool would admit that node's device too (another
// pool's, a device-plugin pool's where the driver also runs, another
// stack's). Nil when there is none.
func draOutside(stack string, p *config.Pool, nodes []*unstructured.Unstructured, dra DRAInventory, cat *mig.Catalog) *hcl.Diagnostic {
	if !p.DRA() {
		return nil
	}
	want := cat.Key(p.GPU)
	profiles := map[string]bool{}
	for _, prof := range DeviceClasses(stack, p) {
		profiles[prof] = true
	}
	var outside []string
	for _, n := range nodes {
		if SelectsNode(p.NodeSelector, n) {
			continue
		}
		for _, d := range dra.Nodes[n.GetName()] {
			prof := d.Profile
			switch d.Type {
			case DRATypeGPU:
				prof = WholeGPUClass
			case DRATypeMIG:
			default:
				continue
			}
			if profiles[prof] && cat.Key(d.Product) == want {
				outside = append(outside, d.String())
			}
		}
	}
	if len(outside) == 0 {
		return nil
	}
	named := strings.Join(outside[:min(len(outside), maxNamed)], ", ")
	if len(outside) > maxNamed {
		named += fmt.Sprintf(" and %d more", len(outside)-maxNamed)
	}
	return problem(p.Range("mode"), "DRA devices outside the pool",
		"Pool %s has mode = \"dra\", and NVIDIA's DRA driver (%s) also publishes devices its DeviceClasses select on nodes the pool does not select: %s. A DeviceClass selects devices by their product and MIG profile, not by node, so a tenant's quota on the pool would admit those devices too. Run the driver only on the pool's nodes, or widen node_selector to those nodes.",
		p.Name, DRADriver, named)
}

// draDynamicMIG refuses DRA pool p with a mig_layout when NVIDIA's DRA
// driver offers the GPUs of one of its nodes by dynamic MIG (its
// DynamicMIG feature gate, v25.12.0: every partition a GPU could hold is
// a device consuming the GPU's shared counters, and the driver makes the
// MIG device when a claim gets it): the layout that mig-manager or the
// agent would make stands in its way. Static partitions, which the driver
// publishes as they are, and a pool without a layout are fine.
func draDynamicMIG(p *config.Pool, members []NodeInventory, dra DRAInventory) *hcl.Diagnostic {
	if !p.DRA() || p.MIGLayout == nil {
		return nil
	}
	var dynamic []string
	for _, m := range members {
		if slices.ContainsFunc(dra.Nodes[m.Node], func(d DRADevice) bool { return d.Partition }) {
			dynamic = append(dynamic, m.Node)
		}
	}
	if len(dynamic) == 0 {
		return nil
	}
	return problem(p.Range("mig_layout"), "MIG layout on a dynamic-MIG pool",
		"Pool %s has a mig_layout, but NVIDIA's DRA driver offers the GPUs of %s by dynamic MIG (its DynamicMIG feature gate): it makes each MIG device when a claim gets it, and a static layout made by mig-manager or the agent would fight it. Remove mig_layout (the pool then offers whole GPUs), or run the driver without DynamicMIG.",
		p.Name, strings.Join(dynamic, ", "))
}
