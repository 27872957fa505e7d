package sim

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/providers/nvml"
)

// simulatedGPUs returns the go-nvml simulated server of a node, or nil for
// GPU models go-nvml does not simulate (L4, L40S, T4, H100-94GB): those
// nodes carry GPU Feature Discovery labels only.
func simulatedGPUs(cat *mig.Catalog, n NodeSpec) (gonvml.Interface, error) {
	if !nvml.CanSimulate(cat, n.GPU) {
		return nil, nil
	}
	return nvml.Simulated(cat, n.GPU, n.Count, n.Driver, n.Name)
}
