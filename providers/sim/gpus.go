package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"

	"github.com/gpuform/gpuform/engine/mig"
)

// GPUs is what the simulated cluster needs of the gpuform agent's MIG
// logic: a node's GPUs, a layout applied to them and their inventory read
// back, as the agent does on a real node. CatalogGPUs is it without cgo
// (what gpuform uses); providers/nvml.SimulatedGPUs is it over go-nvml's
// simulated servers (cgo), and a test holds the two to the same results.
type GPUs interface {
	// Simulate returns a node's count GPUs of model, or nil for GPU models
	// go-nvml's simulated servers do not cover: those nodes carry GPU Feature
	// Discovery labels only, and solveLayout stands in for their MIG.
	Simulate(cat *mig.Catalog, model string, count int, driver, node string) (agentv1.NodeGPUs, error)
}

// solveLayout applies a MIG layout to a node whose GPUs go-nvml does not
// simulate: each entry must place on the node's model (mig.Solve), as
// mig-parted would find out on the GPU.
func (c *Cluster) solveLayout(spec NodeSpec, layout agentv1.Layout) error {
	g, ok := c.cat.Lookup(spec.GPU)
	if !ok {
		return fmt.Errorf("GPU %s is not in the catalog", spec.GPU)
	}
	for _, e := range layout {
		if !e.Enabled {
			continue
		}
		if !g.MIG {
			return fmt.Errorf("%s has no MIG", g.Key)
		}
		if _, err := mig.Solve(g, e.Slices); err != nil {
			return err
		}
	}
	return nil
}

// gfdMIGLabels are the labels GPU Feature Discovery (mixed strategy) sets
// for the MIG instances of a node whose GPUs go-nvml does not simulate:
// nvidia.com/mig-<profile>.count, the node's total per profile, from the
// layout last applied to it.
func gfdMIGLabels(spec NodeSpec, layout agentv1.Layout) map[string]string {
	total := map[string]int{}
	for _, e := range layout {
		if !e.Enabled {
			continue
		}
		gpus := len(e.Indexes)
		if e.All {
			gpus = spec.Count
		}
		for p, n := range e.Slices {
			total[p] += n * gpus
		}
	}
	out := map[string]string{}
	names := slices.Sorted(maps.Keys(total))
	for _, p := range names {
		if total[p] > 0 {
			out[mig.Resource(p)+".count"] = strconv.Itoa(total[p])
		}
	}
	if len(out) > 0 {
		out["nvidia.com/mig.strategy"] = "mixed"
	}
	return out
}
