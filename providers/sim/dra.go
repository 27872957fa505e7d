package sim

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// draSlices are the ResourceSlices NVIDIA's DRA driver publishes on the
// simulated nodes that run it (NodeSpec.DRA); c.mu is held.
func (c *Cluster) draSlices() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, n := range c.spec.Nodes {
		if n.DRA {
			out = append(out, capacity.DRASlice(engine.KindResourceSlice.GroupVersion().String(), n.Name, c.draDevices(n)))
		}
	}
	return out
}

// gpuClusters is the GPU Operator's GPUCluster "gpu-cluster" when a node
// runs its DRA stack (NodeSpec.DRA), else none.
func (c *Cluster) gpuClusters() []*unstructured.Unstructured {
	for _, n := range c.spec.Nodes {
		if n.DRA {
			return []*unstructured.Unstructured{{Object: map[string]any{
				"apiVersion": engine.KindGPUCluster.GroupVersion().String(), "kind": engine.KindGPUCluster.Kind,
				"metadata": map[string]any{"name": "gpu-cluster"},
			}}}
		}
	}
	return nil
}

// draDevices are what NVIDIA's DRA driver publishes of node spec's GPUs
// (capacity.DRAGPU): each GPU whole, or in MIG mode its MIG instances, as
// the simulated GPUs read them back, or for GPUs go-nvml does not simulate
// as the layout last applied makes them; a GPU in MIG mode without
// instances offers nothing.
func (c *Cluster) draDevices(spec NodeSpec) []capacity.DRADevice {
	g, _ := c.cat.Lookup(spec.GPU)
	product := nvmlName(g)
	var out []capacity.DRADevice
	if lib := c.gpus[spec.Name]; lib != nil {
		if inv, err := lib.Read(); err == nil {
			for _, gpu := range inv.GPUs {
				var profiles []string
				for _, in := range gpu.Instances {
					profiles = append(profiles, in.Profile)
				}
				if gpu.MIGEnabled && len(profiles) == 0 {
					continue
				}
				out = append(out, capacity.DRAGPU(spec.Name, product, gpu.Index, profiles)...)
			}
			return out
		}
	}
	layout := c.st.Layouts[spec.Name]
	for i := range spec.Count {
		enabled, profiles := layoutOf(layout, i)
		if enabled && len(profiles) == 0 {
			continue
		}
		out = append(out, capacity.DRAGPU(spec.Name, product, i, profiles)...)
	}
	return out
}

// layoutOf is the MIG mode and instances (profile names, sorted) that
// layout gives GPU index: MIG off and none when no entry names it.
func layoutOf(layout agentv1.Layout, index int) (enabled bool, profiles []string) {
	for _, e := range layout {
		if !e.All && !slices.Contains(e.Indexes, index) {
			continue
		}
		for _, p := range slices.Sorted(maps.Keys(e.Slices)) {
			for range e.Slices[p] {
				profiles = append(profiles, p)
			}
		}
		return e.Enabled, profiles
	}
	return false, nil
}

// nvmlName is the product name NVML reports for g, which NVIDIA's DRA
// driver publishes: the catalog's name with a space (GPU Feature
// Discovery's labels put hyphens for spaces), else its key.
func nvmlName(g *mig.GPU) string {
	if g == nil {
		return ""
	}
	for _, a := range g.Aliases {
		if strings.HasPrefix(a, "NVIDIA ") {
			return a
		}
	}
	return g.Key
}
