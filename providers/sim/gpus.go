package sim

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuform/gpuform/engine/mig"
)

// mockConfigs maps catalog keys to go-nvml's simulated GPU models.
func mockConfigs() map[string]gpus.Config {
	return map[string]gpus.Config{
		"A100-40GB":  gpus.A100_SXM4_40GB,
		"A100-80GB":  gpus.A100_SXM4_80GB,
		"A30-24GB":   gpus.A30_PCIE_24GB,
		"H100-80GB":  gpus.H100_SXM5_80GB,
		"H200-141GB": gpus.H200_SXM5_141GB,
		"B200-180GB": gpus.B200_SXM5_180GB,
	}
}

// simulatedGPUs returns the go-nvml simulated server of a node, or nil for
// GPU models go-nvml does not simulate (L4, L40S, T4, H100-94GB): those
// nodes carry GPU Feature Discovery labels only.
func simulatedGPUs(cat *mig.Catalog, n NodeSpec) (gonvml.Interface, error) {
	g, _ := cat.Lookup(n.GPU)
	cfg, ok := mockConfigs()[g.Key]
	if !ok {
		return nil, nil
	}
	driver := n.Driver
	if driver == "" {
		driver = "550.54.15"
	}
	s, err := server.New(
		server.WithGPUs(gpus.Multiple(n.Count, cfg)...),
		server.WithDriverVersion(driver),
		server.WithNVMLVersion("12."+driver),
		server.WithCUDADriverVersion(12040),
	)
	if err != nil {
		return nil, fmt.Errorf("simulate the GPUs of node %s: %w", n.Name, err)
	}
	return s, nil
}
