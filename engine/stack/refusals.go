package stack

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/engine"
)

// warnApplyRefuses adds to p's warnings what apply, with its default
// safety flags, would refuse of p (a protected tenant's namespace deleted,
// more deletes than --max-deletes), so that plan and a saved plan say it
// before apply does. Re-partitioning under running pods is a warning of
// the plan already. It reports whether there was any.
func warnApplyRefuses(p *engine.Plan) bool {
	reasons := engine.Unsafe(p, engine.SafetyOptions{AllowDisruption: true, MaxDeletes: engine.DefaultMaxDeletes})
	prefix := "Without --allow-destroy, apply refuses it: "
	if p.Destroy {
		prefix = "With the default --max-deletes, apply refuses it: "
	}
	for _, r := range reasons {
		p.Warnings = append(p.Warnings, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Apply will refuse this plan",
			Detail:   prefix + r + ".",
		})
	}
	return len(reasons) > 0
}
