package stack

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
)

// onlyErrors drops warnings from diags.
func onlyErrors(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// FleetError is what a Stack returns for a configuration that names a fleet
// and was loaded for none of its members (config.Config.IsFleet): there is
// nothing to compile or connect to until one member is chosen.
type FleetError struct {
	// Members are the fleet's members, in fleet order.
	Members []*config.Cluster
}

func (e *FleetError) Error() string {
	names := make([]string, len(e.Members))
	for i, m := range e.Members {
		names[i] = m.Name
	}
	return fmt.Sprintf("the configuration is a fleet of %d clusters (%s); this command works on one: name it with --cluster NAME", len(e.Members), strings.Join(names, ", "))
}
