package fleet

import (
	"fmt"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/drift"
)

// DriftRow is the summary text of a member drift checked: "in sync",
// "drifted: " with its counts by class, or "fixed" when after, the drift
// --fix left (nil without --fix), is in sync.
func DriftRow(rep, after *drift.Report) string {
	final := rep
	if after != nil {
		if after.InSync() {
			return "fixed"
		}
		final = after
	}
	if final.InSync() {
		return "in sync"
	}
	counts := final.Counts()
	var parts []string
	for _, c := range drift.Classes() {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
		}
	}
	return "drifted: " + strings.Join(parts, ", ")
}

// ApplyCounts is "N applied, N failed, N skipped" of an apply's report,
// "" without one.
func ApplyCounts(rep *engine.Report) string {
	if rep == nil {
		return ""
	}
	return fmt.Sprintf("%d applied, %d failed, %d skipped", rep.Count(engine.OutcomeApplied), rep.Count(engine.OutcomeFailed), rep.Count(engine.OutcomeSkipped))
}
