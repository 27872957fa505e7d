package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
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
