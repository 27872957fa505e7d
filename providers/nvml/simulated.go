//go:build linux && cgo

package nvml

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// simulatedModels maps catalog keys to go-nvml's simulated GPU models.
func simulatedModels() map[string]gpus.Config {
	return map[string]gpus.Config{
		"A100-40GB":  gpus.A100_SXM4_40GB,
		"A100-80GB":  gpus.A100_SXM4_80GB,
		"A30-24GB":   gpus.A30_PCIE_24GB,
		"H100-80GB":  gpus.H100_SXM5_80GB,
		"H200-141GB": gpus.H200_SXM5_141GB,
		"B200-180GB": gpus.B200_SXM5_180GB,
	}
}

// CanSimulate reports whether go-nvml simulates the GPU model (a catalog
// key or alias).
func CanSimulate(cat *mig.Catalog, model string) bool {
	g, ok := cat.Lookup(model)
	if !ok {
		return false
	}
	_, ok = simulatedModels()[g.Key]
	return ok
}

// Simulated returns a go-nvml simulated server of count GPUs of model (a
// catalog key or alias) with the given driver version ("" for 550.54.15),
// reporting the catalog's memory and first PCI device ID as a real board does,
// for the simulated cluster, the agent's --simulate-gpus and tests. The
// GPUs' UUIDs derive from node (the node's name) and each GPU's index, so
// that the same node reads the same inventory every time it is simulated:
// go-nvml draws random ones, which made a saved plan of the simulated
// cluster stale as soon as it was made.
func Simulated(cat *mig.Catalog, model string, count int, driver, node string) (nvml.Interface, error) {
	g, ok := cat.Lookup(model)
	var cfg gpus.Config
	if ok {
		cfg, ok = simulatedModels()[g.Key]
	}
	if !ok {
		return nil, fmt.Errorf("go-nvml cannot simulate %s GPUs; it simulates A100-40GB, A100-80GB, A30-24GB, H100-80GB, H200-141GB and B200-180GB", model)
	}
	// NVML on a real board reports the catalog's memory and one of its PCI
	// device IDs; go-nvml's simulated GPUs carry a nominal size (81920 MiB
	// for an H100 80GB, which reports 81559) and IDs of their own.
	cfg.MemoryMB = uint64(g.MemoryMiB)
	if len(g.PCIDeviceIDs) > 0 {
		cfg.PciDeviceId = g.PCIDeviceIDs[0]
	}
	if count < 1 || count > 16 {
		return nil, fmt.Errorf("simulate %d GPUs: give 1 to 16", count)
	}
	if driver == "" {
		driver = "550.54.15"
	}
	s, err := server.New(
		server.WithGPUs(gpus.Multiple(count, cfg)...),
		server.WithDriverVersion(driver),
		server.WithNVMLVersion("12."+driver),
		server.WithCUDADriverVersion(12040),
	)
	if err != nil {
		return nil, fmt.Errorf("simulate %d %s GPUs: %w", count, g.Key, err)
	}
	for i, d := range s.Devices {
		if dev, ok := d.(*server.Device); ok {
			dev.UUID = SimulatedUUID(node, i)
		}
	}
	return s, nil
}

// SimulatedUUID is the UUID of the simulated GPU index of node
// (agentv1.SimulatedUUID).
func SimulatedUUID(node string, index int) string { return agentv1.SimulatedUUID(node, index) }

// SimulatedGPUs is the agent's MIG logic over go-nvml's simulated servers,
// as the simulated cluster (providers/sim.GPUs) drives it: the caller
// passes it to the simulator, so that neither provider imports the other.
// providers/sim.CatalogGPUs does the same without cgo; a test holds the
// two to the same results.
type SimulatedGPUs struct{}

// Simulate returns the simulated server of a node's count GPUs of model
// (Simulated), or nil when go-nvml does not simulate the model.
func (SimulatedGPUs) Simulate(cat *mig.Catalog, model string, count int, driver, node string) (agentv1.NodeGPUs, error) {
	if !CanSimulate(cat, model) {
		return nil, nil
	}
	lib, err := Simulated(cat, model, count, driver, node)
	if err != nil {
		return nil, err
	}
	return simulatedNode{lib: lib, cat: cat}, nil
}

// simulatedNode is one node's go-nvml simulated server.
type simulatedNode struct {
	lib nvml.Interface
	cat *mig.Catalog
}

// Apply applies layout to the node's GPUs as the agent does (Apply);
// rebootRequired says a GPU needs a reset before the layout holds.
func (n simulatedNode) Apply(layout agentv1.Layout) (rebootRequired bool, err error) {
	res, err := Apply(n.lib, n.cat, layout, ApplyOptions{})
	if err != nil {
		return false, err
	}
	return res.RebootRequired, nil
}

// Read reads the node's inventory as the agent publishes it (Read).
func (n simulatedNode) Read() (*agentv1.Inventory, error) {
	return Read(n.lib, n.cat)
}
