package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// DriftMarker is the hidden first line of the Markdown report; CI jobs
// find the stack (and their issue) by it.
func DriftMarker(stack string) string {
	return fmt.Sprintf("<!-- gpuform:drift stack=%s -->", stack)
}

// DriftMarkdown writes the report as GitHub-flavoured Markdown for an
// issue body: the hidden marker, the summary line, a table of drifted
// objects, then the field differences (in <details> when over 12 lines).
// after, when drift --fix ran, adds the state after the fix.
func DriftMarkdown(w io.Writer, r, after *drift.Report) error {
	bw := bufio.NewWriter(w)
	textsafe.Fprintf(bw, "%s\n### gpuform drift for stack `%s`\n\n", DriftMarker(r.Stack), r.Stack)
	textsafe.Fprintf(bw, "**%s**\n\nCluster %s, configuration at %s", DriftSummaryLine(r), mdCode(r.Cluster), mdEscape(where(r)))
	if !r.CheckedAt.IsZero() {
		textsafe.Fprintf(bw, ", checked %s", r.CheckedAt.UTC().Format(time.RFC3339))
	}
	textsafe.Fprintf(bw, ".\n")
	if len(r.Warnings) > 0 {
		textsafe.Fprintf(bw, "\n#### Warnings\n\n")
		for _, warn := range r.Warnings {
			textsafe.Fprintf(bw, "- %s\n", mdEscape(warn))
		}
	}
	if !r.InSync() {
		textsafe.Fprintf(bw, "\n| Class | Object | Address | Detail |\n|---|---|---|---|\n")
		for _, it := range r.Items {
			textsafe.Fprintf(bw, "| %s | %s | %s | %s |\n", it.Class, mdEscape(it.Key().String()), mdCode(it.Address), mdEscape(strings.Join(it.Details, " ")))
		}
		var details strings.Builder
		tr := textRenderer{w: bufio.NewWriter(&details)}
		for _, it := range r.Items {
			if len(it.Fields) > 0 {
				tr.driftItem(drift.Item{Class: it.Class, Address: it.Address, APIVersion: it.APIVersion, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Action: it.Action, AppliedCommit: it.AppliedCommit, Fields: it.Fields, Sensitive: it.Sensitive})
			}
		}
		_ = tr.w.Flush()
		if details.Len() > 0 {
			block := "```diff\n" + strings.ReplaceAll(details.String(), "```", "` ` `") + "```\n"
			if strings.Count(details.String(), "\n") > 12 {
				textsafe.Fprintf(bw, "\n<details><summary>Field differences (live → configuration)</summary>\n\n%s\n</details>\n", block)
			} else {
				textsafe.Fprintf(bw, "\nField differences (live → configuration):\n\n%s", block)
			}
		}
		textsafe.Fprintf(bw, "\n%s\n", mdEscape(driftAdvice(r)))
	}
	if after != nil {
		textsafe.Fprintf(bw, "\n#### After `gpuform drift --fix`\n\n**%s**\n", DriftSummaryLine(after))
		for _, it := range after.Items {
			textsafe.Fprintf(bw, "- %s: %s (%s) %s\n", it.Class, mdEscape(it.Key().String()), mdCode(it.Address), mdEscape(strings.Join(it.Details, " ")))
		}
	}
	return bw.Flush()
}
