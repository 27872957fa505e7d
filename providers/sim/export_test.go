package sim

import "github.com/gpuform/gpuform/engine/mig"

// CanSimulate reports whether CatalogGPUs (and go-nvml) simulate the GPU
// model, a catalog key or alias.
func CanSimulate(cat *mig.Catalog, model string) bool {
	g, ok := cat.Lookup(model)
	if !ok {
		return false
	}
	_, ok = catalogModels[g.Key]
	return ok
}
