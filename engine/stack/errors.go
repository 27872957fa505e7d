package stack

import (
	"github.com/hashicorp/hcl/v2"
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
