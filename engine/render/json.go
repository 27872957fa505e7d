package render

import (
	"encoding/json"
	"io"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
)

// JSONFormatVersion is the version of the --json plan schema (docs/plan.md).
const JSONFormatVersion = "1.0"

// JSONPlan is the --json form of a plan.
type JSONPlan struct {
	FormatVersion   string         `json:"format_version"`
	Stack           string         `json:"stack"`
	Source          string         `json:"source"`
	ResourceChanges []JSONChange   `json:"resource_changes"`
	Summary         engine.Summary `json:"summary"`
	Warnings        []string       `json:"warnings"`
	Capacity        []capacity.Row `json:"capacity"`
	// ConfigSource is the commit the configuration was read at; absent
	// when the configuration is not in a git repository.
	ConfigSource *engine.ConfigSource `json:"config_source,omitempty"`
	// BaseSource, ConfigChanges and CapacityBefore are set by plan --base:
	// the base commit, the semantic diff of the configuration from base to
	// head, and the base configuration's capacity on the same nodes.
	BaseSource     *engine.ConfigSource `json:"base_source,omitempty"`
	ConfigChanges  []engine.BlockChange `json:"config_changes,omitempty"`
	CapacityBefore []capacity.Row       `json:"capacity_before,omitempty"`
	// Destroy marks a destroy plan; Targets are the --target addresses a
	// targeted plan was narrowed to.
	Destroy bool     `json:"destroy,omitempty"`
	Targets []string `json:"targets,omitempty"`
}

// JSONChange is one entry of resource_changes.
type JSONChange struct {
	Address      string             `json:"address"`
	APIVersion   string             `json:"api_version"`
	Kind         string             `json:"kind"`
	Namespace    string             `json:"namespace,omitempty"`
	Name         string             `json:"name"`
	Action       engine.Action      `json:"action"`
	Before       any                `json:"before"`
	After        any                `json:"after"`
	ChangedPaths []engine.FieldDiff `json:"changed_paths"`
	DependsOn    []engine.Key       `json:"depends_on,omitempty"`
	Reason       string             `json:"reason,omitempty"`
	Sensitive    bool               `json:"sensitive,omitempty"`
}

// NewJSONPlan converts a plan to its --json form. Sensitive objects show
// "(sensitive)" in place of before, after and field values.
func NewJSONPlan(p *engine.Plan) JSONPlan {
	out := JSONPlan{FormatVersion: JSONFormatVersion, Stack: p.Stack, Source: p.Source, Summary: p.Summary, ResourceChanges: []JSONChange{}, Warnings: engine.WarningTexts(p.Warnings), ConfigSource: p.ConfigSource, Destroy: p.Destroy, Targets: p.Targets}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	out.Capacity = []capacity.Row{}
	if p.Capacity != nil {
		out.Capacity = append(out.Capacity, p.Capacity.Rows...)
	}
	for _, c := range p.Changes {
		jc := JSONChange{
			Address: c.Address, APIVersion: c.APIVersion, Kind: c.Key.Kind, Namespace: c.Key.Namespace, Name: c.Key.Name,
			Action: c.Action, ChangedPaths: c.Fields, DependsOn: c.DependsOn, Reason: c.Reason, Sensitive: c.Sensitive,
		}
		if jc.ChangedPaths == nil {
			jc.ChangedPaths = []engine.FieldDiff{}
		}
		if c.After != nil {
			jc.After = c.After.Object
		}
		if c.Before != nil {
			if c.After != nil {
				jc.Before = project(c.After.Object, c.Before.Object)
			} else {
				jc.Before = engine.CleanLive(c.Before.Object)
			}
		}
		if c.Sensitive {
			jc.Before, jc.After = hideIfSet(jc.Before), hideIfSet(jc.After)
			jc.ChangedPaths = hideFields(jc.ChangedPaths)
		}
		out.ResourceChanges = append(out.ResourceChanges, jc)
	}
	return out
}

// hideFields is fields with every value set shown as engine.SensitiveValue.
func hideFields(fields []engine.FieldDiff) []engine.FieldDiff {
	out := make([]engine.FieldDiff, len(fields))
	for i, f := range fields {
		out[i] = engine.FieldDiff{Path: f.Path, Op: f.Op, Before: hideIfSet(f.Before), After: hideIfSet(f.After)}
	}
	return out
}

func hideIfSet(v any) any {
	if v == nil {
		return nil
	}
	return engine.SensitiveValue
}

// JSON writes the plan as indented JSON.
func JSON(w io.Writer, p *engine.Plan) error {
	return JSONValue(w, NewJSONPlan(p))
}

// project returns the parts of live that desired sets, so "before" shows the
// same fields as "after" without server-filled noise.
func project(desired, live map[string]any) map[string]any {
	out := map[string]any{}
	for k, dv := range desired {
		lv, ok := live[k]
		if !ok {
			continue
		}
		dm, dok := dv.(map[string]any)
		lm, lok := lv.(map[string]any)
		if dok && lok {
			out[k] = project(dm, lm)
			continue
		}
		out[k] = lv
	}
	return out
}

// JSONValue writes v as indented JSON.
func JSONValue(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
