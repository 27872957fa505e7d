package render

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// applyVerbs are the progress words of an action: starting, done, and the
// verb.
func applyVerbs(a engine.Action) [3]string {
	switch a {
	case engine.ActionCreate:
		return [3]string{"Creating", "Creation complete", "create"}
	case engine.ActionAdopt:
		return [3]string{"Adopting", "Adoption complete", "adopt"}
	case engine.ActionDelete:
		return [3]string{"Destroying", "Destruction complete", "destroy"}
	}
	return [3]string{"Modifying", "Modifications complete", "modify"}
}

func applySeconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// applyCounts counts the applied changes by what they did.
func applyCounts(rep *engine.Report) (added, changed, destroyed int) {
	for _, r := range rep.Results {
		if r.Outcome != engine.OutcomeApplied {
			continue
		}
		switch r.Change.Action {
		case engine.ActionCreate:
			added++
		case engine.ActionUpdate, engine.ActionAdopt:
			changed++
		case engine.ActionDelete:
			destroyed++
		}
	}
	return added, changed, destroyed
}

// ApplyComplete writes the account of an apply that applied every change:
// "Apply complete! Resources: 2 added, 1 changed, 0 destroyed.", or for a
// destroy (a plan of gpuform destroy) "Destroy complete! Resources: 3
// destroyed.", as Terraform words them; in green with color.
func ApplyComplete(w io.Writer, rep *engine.Report, destroy, color bool) error {
	added, changed, destroyed := applyCounts(rep)
	line := fmt.Sprintf("Apply complete! Resources: %d added, %d changed, %d destroyed.", added, changed, destroyed)
	if destroy {
		line = fmt.Sprintf("Destroy complete! Resources: %d destroyed.", destroyed)
	}
	_, err := textsafe.Fprintf(w, "\n%s\n", textsafe.Style(color, "1;32", line))
	return err
}

// ApplyFailed writes the account of an apply that failed or was stopped
// (stopped is why: Ctrl-C, --timeout, a lost lock; nil when it ran to its
// end): the counts, a table of what failed and was skipped, and that
// applying again converges.
func ApplyFailed(w io.Writer, rep *engine.Report, stopped error) error {
	added, changed, destroyed := applyCounts(rep)
	applied, failed, skipped := rep.Count(engine.OutcomeApplied), rep.Count(engine.OutcomeFailed), rep.Count(engine.OutcomeSkipped)
	what := "Apply failed"
	var timedOut *engine.RunTimeoutError
	var lost *engine.LockLostError
	switch {
	case errors.As(stopped, &timedOut):
		what = fmt.Sprintf("Apply stopped: %v", timedOut)
	case errors.As(stopped, &lost):
		what = fmt.Sprintf("Apply stopped: %v", lost)
	case stopped != nil:
		what = "Apply interrupted"
	}
	textsafe.Fprintf(w, "\nError: %s: %d applied (%d added, %d changed, %d destroyed), %d failed, %d skipped.\n\n", what, applied, added, changed, destroyed, failed, skipped)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	textsafe.Fprintln(tw, "  RESULT\tOBJECT\tADDRESS\tDETAIL")
	for _, o := range []engine.Outcome{engine.OutcomeFailed, engine.OutcomeSkipped} {
		for _, r := range rep.Results {
			if r.Outcome == o {
				textsafe.Fprintf(tw, "  %s\t%s\t%s\t%s\n", o, r.Change.Key, r.Change.Address, applyOneLine(r.Err))
			}
		}
	}
	textsafe.Fprintf(tw, "  applied\t%d objects\t\t\n", applied)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := textsafe.Fprintln(w, "\nWhat was applied stays applied. Fix the cause and run apply again: it converges.")
	return err
}

func applyOneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
