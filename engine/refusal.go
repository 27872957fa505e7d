package engine

// The refusals of the pipeline (engine/stack) as typed errors, declared here
// so that what reports them (engine/render, the CLI) reads them without
// importing the pipeline.

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// ConfigError is a configuration the pipeline refused: invalid, or not
// fitting the GPUs (capacity). Its diagnostics went to
// the stack's Options.Diagnostics as they were found.
type ConfigError struct {
	Diags hcl.Diagnostics
}

func (e *ConfigError) Error() string {
	if msg := FirstError(e.Diags); msg != "" {
		return "invalid configuration: " + msg
	}
	return "invalid configuration"
}

// ConflictError is a plan with objects in the way of the configuration
// that the stack does not manage: applying it would fail, so nothing was
// changed.
type ConflictError struct {
	// Conflicts counts the objects in the way.
	Conflicts int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d objects are in the way of the configuration and not managed by this stack", e.Conflicts)
}

// UnsafeError is a plan that breaks the safety limits (Unsafe):
// nothing was changed.
type UnsafeError struct {
	// Reasons say what is unsafe, one sentence each.
	Reasons []string
}

func (e *UnsafeError) Error() string {
	return "unsafe plan: " + strings.Join(e.Reasons, "; ")
}

// WrongClusterError is a saved plan applied to another cluster than the
// one it was made against.
type WrongClusterError struct {
	// Planned is where the plan was made, Reached where this run reads.
	Planned, Reached string
}

func (e *WrongClusterError) Error() string {
	return fmt.Sprintf("the plan was made against %s, but this run reaches %s", e.Planned, e.Reached)
}

// StalePlanError is a saved plan whose objects changed in the cluster
// since it was made: applying it could undo or miss those changes.
type StalePlanError struct {
	// Objects name what changed.
	Objects []string
}

func (e *StalePlanError) Error() string {
	return fmt.Sprintf("the saved plan is stale: %d objects changed since it was made", len(e.Objects))
}

// FirstError is the first error of diags in one line: summary, detail and
// source range; "" when diags has none.
func FirstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + strings.TrimSuffix(d.Detail, ".")
		}
		if d.Subject != nil {
			msg += " (" + d.Subject.String() + ")"
		}
		return strings.ReplaceAll(msg, "\n", " ")
	}
	return ""
}
