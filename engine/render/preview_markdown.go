package render

import (
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// CollapseLines is the length, in lines, above which a Markdown section is
// folded into <details>.
const CollapseLines = 12

// PreviewMarkdown returns a preview as one GitHub-flavoured Markdown
// text: the summary line first, warnings never collapsed, then the
// configuration changes, the plan and the capacity, each folded into
// <details> when longer than CollapseLines. SplitComments cuts it into
// comments.
func PreviewMarkdown(pv *engine.Preview) string {
	var b strings.Builder
	p := pv.Plan
	code := mdCode
	textsafe.Fprintf(&b, "### gpuform plan for stack %s\n\n", mdCode(p.Stack))
	textsafe.Fprintf(&b, "**%s**\n\n", mdEscape(PreviewSummary(pv)))
	textsafe.Fprintf(&b, "Configuration: %s, compared with base %s.\n", describeSource(p.ConfigSource, code), describeSource(pv.Base, code))
	if warns := engine.WarningTexts(PreviewWarnings(pv)); len(warns) > 0 {
		textsafe.Fprintf(&b, "\n#### ⚠️ Warnings\n\n")
		for _, w := range warns {
			textsafe.Fprintf(&b, "- %s\n", mdEscape(w))
		}
	}
	writeRepartitionsMarkdown(&b, p.Repartitions, "####")

	textsafe.Fprintf(&b, "\n#### 1. Configuration changes\n\n")
	if len(pv.ConfigChanges) == 0 {
		textsafe.Fprintf(&b, "The configuration is the same as at base.\n")
	} else {
		var body strings.Builder
		body.WriteString("```diff\n")
		var changes strings.Builder
		writeConfigChanges(&changes, pv.ConfigChanges, nil, true)
		body.WriteString(fenceSafe(changes.String()))
		body.WriteString("```\n")
		textsafe.Fprintf(&b, "%s\n\n", configChangesSummary(pv.ConfigChanges))
		collapse(&b, "Configuration changes", body.String())
	}

	textsafe.Fprintf(&b, "\n#### 2. What apply would do to the cluster now\n\n")
	if !p.HasChanges() && p.Summary.Conflicts == 0 {
		textsafe.Fprintf(&b, "No changes. The cluster matches this configuration.\n")
	} else {
		var table strings.Builder
		table.WriteString("| | Object | Address |\n|---|---|---|\n")
		for _, c := range p.Changes {
			textsafe.Fprintf(&table, "| `%s` | %s | %s |\n", c.Action.Symbol(), mdEscape(c.Key.String()), mdCode(c.Address))
		}
		textsafe.Fprintf(&b, "%s\n\n", SummaryLine(p))
		collapse(&b, "Changes", table.String())
		if details := fieldChanges(p); details != "" {
			b.WriteString("\n")
			collapse(&b, "Field changes", "```diff\n"+fenceSafe(details)+"```\n")
		}
	}

	textsafe.Fprintf(&b, "\n#### 3. GPU capacity per pool (base → this change)\n\n")
	pairs := capacityPairs(pv)
	if len(pairs) == 0 {
		textsafe.Fprintf(&b, "No GPU pools.\n")
	} else {
		var table strings.Builder
		textsafe.Fprintf(&b, "Bar (this change): %s.\n\n", capacityLegend)
		table.WriteString("| Pool | Resource | Total | Quota | Requested | Free | Status | Quota of capacity |\n|---|---|---:|---:|---:|---:|---|---|\n")
		for _, c := range pairs {
			total, quota, requested, free, status := c.cells("→")
			if status != "OK" && status != "removed" {
				status = "⚠️ " + status
			}
			textsafe.Fprintf(&table, "| %s | %s | %s | %s | %s | %s | %s | `%s` |\n", mdEscape(c.pool), mdCode(c.resource), total, quota, requested, free, status, c.bar())
		}
		collapse(&b, "GPU capacity", table.String())
	}
	return b.String()
}

// collapse writes body, folded into <details> when over CollapseLines
// lines (not counting code fences).
func collapse(b *strings.Builder, summary, body string) {
	n := 0
	for _, l := range strings.SplitAfter(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "```") {
			n++
		}
	}
	if n <= CollapseLines {
		b.WriteString(body)
		return
	}
	textsafe.Fprintf(b, "<details><summary>%s (%d lines)</summary>\n\n%s\n</details>\n", summary, n, body)
}
