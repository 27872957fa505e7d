package render

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// maxStaleListed bounds the objects a stale plan's refusal names.
const maxStaleListed = 20

// Refusal writes the words of a refusal of the pipeline (objects in the
// way, an unsafe plan, a held lock, a saved plan for another cluster or
// stale) and reports whether err was one; an invalid configuration was
// printed as diagnostics already and writes nothing. path is the saved
// plan's file ("" for the configuration); color styles the unsafe-plan
// heading.
func Refusal(w io.Writer, err error, path string, color bool) bool {
	var (
		invalid  *engine.ConfigError
		conflict *engine.ConflictError
		unsafe   *engine.UnsafeError
		held     *engine.LockHeldError
		wrong    *engine.WrongClusterError
		stale    *engine.StalePlanError
	)
	switch {
	case errors.As(err, &invalid):
	case errors.As(err, &conflict):
		textsafe.Fprintf(w, "Error: %d %s in the way of the configuration and not managed by this stack; nothing was changed. Rename them in the configuration, remove them, or apply with --adopt to take them over.\n", conflict.Conflicts, PluralWord(conflict.Conflicts, "object is", "objects are"))
	case errors.As(err, &unsafe):
		for _, r := range unsafe.Reasons {
			textsafe.Fprintf(w, "%s %s.\n", textsafe.Style(color, "1;31", "Error: Unsafe plan:"), r)
		}
	case errors.As(err, &held):
		textsafe.Fprintf(w, "Error: Error acquiring the state lock\n\n%s.\n", held.Error())
	case errors.As(err, &wrong):
		textsafe.Fprintf(w, "Error: Saved plan is for another cluster\n\n%s was planned against %s, but this run reaches %s. Apply it where it was planned, or plan again here.\n", path, wrong.Planned, wrong.Reached)
	case errors.As(err, &stale):
		objects := stale.Objects
		if len(objects) > maxStaleListed {
			objects = append(objects[:maxStaleListed:maxStaleListed], fmt.Sprintf("... and %d more", len(objects)-maxStaleListed))
		}
		textsafe.Fprintf(w, "Error: Saved plan is stale\n\nThe cluster changed since %s was planned, so applying it could undo or miss those changes:\n  %s\n\nRun plan again and apply the new plan.\n", path, strings.Join(objects, "\n  "))
	default:
		return false
	}
	return true
}
