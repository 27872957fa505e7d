package nvml

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

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
// for the simulated cluster, the agent's --simulate-gpus and tests.
func Simulated(cat *mig.Catalog, model string, count int, driver string) (nvml.Interface, error) {
	g, ok := cat.Lookup(model)
	var cfg gpus.Config
	if ok {
		cfg, ok = simulatedModels()[g.Key]
	}
	if !ok {
		return nil, fmt.Errorf("go-nvml cannot simulate %s GPUs; it simulates A100-40GB, A100-80GB, A30-24GB, H100-80GB, H200-141GB and B200-180GB", model)
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
	return s, nil
}
