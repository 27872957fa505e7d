package render

import (
	"io"

	"github.com/gpuform/gpuform/engine"
)

// PreviewJSON writes a preview as the --json plan with base_source,
// config_changes and capacity_before, and every preview warning.
func PreviewJSON(w io.Writer, pv *engine.Preview) error {
	out := NewJSONPlan(pv.Plan)
	out.BaseSource = pv.Base
	out.ConfigChanges = pv.ConfigChanges
	out.CapacityBefore = pv.CapacityBefore
	out.Warnings = engine.WarningTexts(PreviewWarnings(pv))
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	return JSONValue(w, out)
}
