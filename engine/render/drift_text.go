package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// classHeading says what a class means, for text and Markdown.
func classHeading(c drift.Class) string {
	switch c {
	case drift.LiveEdit:
		return "changed in the cluster by hand since it was applied"
	case drift.Unapplied:
		return "the configuration at the ref is not applied yet"
	case drift.Missing:
		return "applied, then deleted from the cluster"
	case drift.Hardware:
		return "nodes whose GPUs or MIG state differ from their pool"
	}
	return ""
}

// DriftSummaryLine is the report's last line.
func DriftSummaryLine(r *drift.Report) string {
	if r.InSync() {
		return "No drift. The cluster matches the configuration."
	}
	counts := r.Counts()
	classes := drift.Classes()
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%d %s", counts[c], c)
	}
	return "Drift: " + strings.Join(parts, ", ") + "."
}

// where describes the configuration the report compares with.
func where(r *drift.Report) string {
	if r.ConfigSource != nil {
		return r.ConfigSource.String()
	}
	if r.Commit == "" {
		return "working directory (not in git)"
	}
	return drift.ShortCommit(r.Commit)
}

// DriftText writes the report for a terminal: the drifted objects by
// class with their fields (live -> configuration), then a summary line.
func DriftText(w io.Writer, r *drift.Report, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	tr := textRenderer{w: bw, color: opts.Color}
	textsafe.Fprintf(bw, "Drift check of stack %s: cluster %s against the configuration at %s.\n", r.Stack, r.Cluster, where(r))
	if r.InSync() {
		textsafe.Fprintf(bw, "\n%s\n", tr.paint("1;32", DriftSummaryLine(r)))
		tr.driftWarnings(r)
		return bw.Flush()
	}
	tr.driftItems(r)
	tr.driftWarnings(r)
	textsafe.Fprintf(bw, "\n%s\n", tr.paint("1", DriftSummaryLine(r)))
	textsafe.Fprintf(bw, "%s\n", driftAdvice(r))
	return bw.Flush()
}

// driftAdvice says what to do about a report's drift.
func driftAdvice(r *drift.Report) string {
	if !r.Fixable() {
		return "Apply cannot fix hardware: repair or relabel the nodes, or change the pool's gpu, driver_version or layout."
	}
	s := fmt.Sprintf("To make the cluster match the configuration, run gpuform drift --fix (or gpuform apply): %d to add, %d to change, %d to destroy.", r.Plan.Add, r.Plan.Change, r.Plan.Destroy)
	if r.Plan.Conflicts > 0 {
		s += fmt.Sprintf(" %d %s in the way and must be removed or adopted first.", r.Plan.Conflicts, PluralWord(r.Plan.Conflicts, "object is", "objects are"))
	}
	if r.Counts()[drift.Unapplied] > 0 {
		s += " Unapplied changes may be waiting for review: check before fixing."
	}
	return s
}

func (t *textRenderer) driftItems(r *drift.Report) {
	counts := r.Counts()
	for _, class := range drift.Classes() {
		if counts[class] == 0 {
			continue
		}
		textsafe.Fprintf(t.w, "\n%s\n", t.paint("1", fmt.Sprintf("%s: %s (%s)", class, classHeading(class), capacity.Count(counts[class], "object"))))
		for _, it := range r.Items {
			if it.Class == class {
				t.driftItem(it)
			}
		}
	}
}

func (t *textRenderer) driftItem(it drift.Item) {
	sym := "!"
	if it.Action != "" && it.Action != engine.ActionConflict {
		sym = it.Action.Symbol()
	}
	note := it.Address
	if it.AppliedCommit != "" {
		note += ", applied from " + drift.ShortCommit(it.AppliedCommit)
	}
	textsafe.Fprintf(t.w, "  %s %s  %s\n", t.symbol(sym), it.Key(), t.paint("2", "# "+note))
	gvk := schema.FromAPIVersionAndKind(it.APIVersion, it.Kind)
	for _, f := range it.Fields {
		t.field(f, it.Sensitive, gvk)
	}
	for _, d := range it.Details {
		textsafe.Fprintf(t.w, "      %s\n", d)
	}
}

func (t *textRenderer) driftWarnings(r *drift.Report) {
	for _, w := range r.Warnings {
		textsafe.Fprintf(t.w, "\n%s %s\n", t.paint("1;33", "Warning:"), w)
	}
}
