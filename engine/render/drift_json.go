package render

import (
	"io"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/drift"
)

// DriftJSONFormatVersion is the version of the drift --json schema (docs/drift.md).
const DriftJSONFormatVersion = "1.0"

// JSONDrift is the --json form of a drift report.
type JSONDrift struct {
	FormatVersion string               `json:"format_version"`
	Stack         string               `json:"stack"`
	Cluster       string               `json:"cluster"`
	Commit        string               `json:"commit"`
	ConfigSource  *engine.ConfigSource `json:"config_source,omitempty"`
	CheckedAt     string               `json:"checked_at"`
	InSync        bool                 `json:"in_sync"`
	Counts        map[drift.Class]int  `json:"counts"`
	Drift         []drift.Item         `json:"drift"`
	Warnings      []string             `json:"warnings"`
	// Plan counts what apply (drift --fix) would do.
	Plan engine.Summary `json:"plan"`
	// Fix is the state after drift --fix, when it ran.
	Fix *JSONDrift `json:"fix,omitempty"`
}

// NewJSONDrift converts a report to its --json form, hiding the values of
// sensitive objects.
func NewJSONDrift(r *drift.Report) JSONDrift {
	out := JSONDrift{
		FormatVersion: DriftJSONFormatVersion, Stack: r.Stack, Cluster: r.Cluster, Commit: r.Commit, ConfigSource: r.ConfigSource,
		InSync: r.InSync(), Counts: r.Counts(), Drift: make([]drift.Item, 0, len(r.Items)), Warnings: r.Warnings, Plan: r.Plan,
	}
	if !r.CheckedAt.IsZero() {
		out.CheckedAt = r.CheckedAt.UTC().Format(time.RFC3339)
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, it := range r.Items {
		if it.Sensitive {
			it.Fields = hideFields(it.Fields)
		}
		if it.Details == nil {
			it.Details = []string{}
		}
		out.Drift = append(out.Drift, it)
	}
	return out
}

// DriftJSON writes the report (and, after drift --fix, the state
// after the fix) as indented JSON.
func DriftJSON(w io.Writer, r, after *drift.Report) error {
	j := NewJSONDrift(r)
	if after != nil {
		a := NewJSONDrift(after)
		j.Fix = &a
	}
	return JSONValue(w, j)
}
