package render

import (
	"bufio"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// PreviewText writes a preview as text: the configuration changes,
// the plan, the capacity base -> head, warnings, and the summary line.
func PreviewText(w io.Writer, pv *engine.Preview, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	r := &textRenderer{w: bw, color: opts.Color}
	p := pv.Plan
	ident := func(s string) string { return s }
	textsafe.Fprintf(bw, "Configuration: %s\n", strings.TrimPrefix(describeSource(p.ConfigSource, ident), "the "))
	textsafe.Fprintf(bw, "Base:          %s\n", strings.TrimPrefix(describeSource(pv.Base, ident), "the "))
	writeRepartitionsText(bw, p.Repartitions, r.title)

	textsafe.Fprintf(bw, "\n%s\n", r.paint("1", "1. Configuration changes (base -> this change)"))
	if len(pv.ConfigChanges) == 0 {
		textsafe.Fprintf(bw, "\n  The configuration is the same as at base.\n")
	} else {
		textsafe.Fprintf(bw, "\n")
		writeConfigChanges(bw, pv.ConfigChanges, r, false)
		textsafe.Fprintf(bw, "\n  %s\n", configChangesSummary(pv.ConfigChanges))
	}

	textsafe.Fprintf(bw, "\n%s\n", r.paint("1", "2. What apply would do to the cluster now"))
	if !p.HasChanges() && p.Summary.Conflicts == 0 {
		textsafe.Fprintf(bw, "\n  No changes. The cluster matches this configuration.\n")
	}
	for _, g := range groups(p.Changes) {
		textsafe.Fprintf(bw, "\n  %s\n", r.paint("1", "# "+g[0].Address+" "+groupVerb(g)))
		for _, c := range g {
			r.change(c)
		}
	}

	textsafe.Fprintf(bw, "\n%s\n\n", r.paint("1", "3. GPU capacity per pool (base -> this change)"))
	pairs := capacityPairs(pv)
	if len(pairs) == 0 {
		textsafe.Fprintf(bw, "  No GPU pools.\n")
	} else {
		tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
		textsafe.Fprintln(tw, "  POOL\tRESOURCE\tTOTAL\tQUOTA\tREQUESTED\tFREE\tSTATUS\tQUOTA OF CAPACITY")
		for _, c := range pairs {
			total, quota, requested, free, status := c.cells("->")
			textsafe.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.pool, c.resource, total, quota, requested, free, status, c.bar())
		}
		_ = tw.Flush()
		textsafe.Fprintf(bw, "  (bar, this change: %s)\n", capacityLegend)
	}
	writeWarnings(bw, PreviewWarnings(pv), opts)
	textsafe.Fprintf(bw, "\n%s\n", r.paint("1", PreviewSummary(pv)))
	return bw.Flush()
}
