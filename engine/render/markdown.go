package render

import (
	"bufio"
	"io"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// Markdown writes the plan as GitHub-flavoured Markdown: the summary
// line first, a table of changes, then field changes in a diff block.
func Markdown(w io.Writer, p *engine.Plan) error {
	bw := bufio.NewWriter(w)
	textsafe.Fprintf(bw, "### gpuform plan for stack %s\n\n", mdCode(p.Stack))
	if p.Source != "" {
		textsafe.Fprintf(bw, "Cluster: %s\n\n", mdCode(p.Source))
	}
	if !p.HasChanges() && p.Summary.Conflicts == 0 {
		textsafe.Fprintf(bw, "**No changes.** The cluster matches the configuration.\n")
		writeMarkdownWarnings(bw, p)
		return bw.Flush()
	}
	textsafe.Fprintf(bw, "**%s**\n", SummaryLine(p))
	writeMarkdownWarnings(bw, p)
	writeRepartitionsMarkdown(bw, p.Repartitions, "####")
	textsafe.Fprintf(bw, "\n| | Object | Address |\n|---|---|---|\n")
	for _, c := range p.Changes {
		textsafe.Fprintf(bw, "| `%s` | %s | %s |\n", c.Action.Symbol(), mdEscape(c.Key.String()), mdCode(c.Address))
	}
	writeMarkdownCapacity(bw, p)
	if details := fieldChanges(p); details != "" {
		textsafe.Fprintf(bw, "\n<details><summary>Field changes</summary>\n\n```diff\n%s```\n\n</details>\n", fenceSafe(details))
	}
	return bw.Flush()
}

// fieldChanges is the text plan's field changes of the plan's updates,
// adoptions and conflicts: the diff block of Markdown and PreviewMarkdown.
func fieldChanges(p *engine.Plan) string {
	var details strings.Builder
	tr := textRenderer{w: bufio.NewWriter(&details)}
	for _, c := range p.Changes {
		if c.Action == engine.ActionUpdate || c.Action == engine.ActionAdopt || c.Action == engine.ActionConflict {
			tr.change(c)
		}
	}
	_ = tr.w.Flush()
	return details.String()
}

func writeMarkdownWarnings(w io.Writer, p *engine.Plan) {
	if len(p.Warnings) == 0 {
		return
	}
	textsafe.Fprintf(w, "\n#### Warnings\n\n")
	for _, warn := range engine.WarningTexts(p.Warnings) {
		textsafe.Fprintf(w, "- %s\n", mdEscape(warn))
	}
}

func writeMarkdownCapacity(w io.Writer, p *engine.Plan) {
	if p.Capacity == nil || len(p.Capacity.Rows) == 0 {
		return
	}
	textsafe.Fprintf(w, "\n#### GPU capacity (now → after)\n\nBar: %s.\n\n| Pool | Resource | Total | Quota | Requested | Free | Quota of capacity |\n|---|---|---:|---:|---:|---:|---|\n", capacityLegend)
	for _, r := range p.Capacity.Rows {
		textsafe.Fprintf(w, "| %s | %s | %s | %s | %d | %d | `%s` |\n", mdEscape(r.Pool), mdCode(r.Resource), strings.ReplaceAll(beforeAfter(r.TotalBefore, r.Total), "->", "→"), strings.ReplaceAll(beforeAfter(r.QuotaBefore, r.Quota), "->", "→"), r.Requested, r.Free, CapacityBar(r, capacityBarWidth))
	}
}
