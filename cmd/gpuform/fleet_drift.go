package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/fleet"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// memberDrift is what checking one member's drift gave.
type memberDrift struct {
	name string
	run  *memberRun
	rep  *drift.Report
	// fix is whether --fix ran on the member; after is the drift it left
	// (nil when it failed).
	fix   bool
	after *drift.Report
	err   error
}

// final is the member's drift once --fix ran.
func (md *memberDrift) final() *drift.Report {
	if md.after != nil {
		return md.after
	}
	return md.rep
}

// fleetDriftCommand is drift on the fleet of members: every selected
// member checked at once, at most --fleet-parallelism, one report per
// member in fleet order, then the fleet summary. With --fix, each drifted
// member is fixed under its own lock as drift --fix fixes one cluster.
// Exit status: 1 when a member could not be checked (or fixed), else 2
// when a member is still drifted, else 0.
func (g *globals) fleetDriftCommand(cmd *cobra.Command, members []fleetMember, f *driftFlags, ff *fleetFlags, format string) error {
	if err := checkFleetFlags(cmd, ff, "repo", "ref"); err != nil {
		return err
	}
	members, err := selectMembers(members, ff.clusters)
	if err != nil {
		return err
	}
	drifts := forEachMember(cmd.Context(), members, ff.parallelism, func(ctx context.Context, _ int, m fleetMember) *memberDrift {
		r := g.member(m)
		defer r.close()
		md := &memberDrift{name: m.name, run: r}
		st := r.memberStack(m, connection{inCluster: true})
		md.rep, md.err = st.Drift(ctx)
		if md.err != nil {
			md.err = r.g.fail(md.err, "")
		} else if f.fix && !md.rep.InSync() {
			// The fix's progress goes with the text report, and to standard
			// error beside JSON and Markdown (as for one cluster).
			progress := &r.stdout
			if format != formatText {
				progress = &r.stderr
			}
			md.fix = true
			md.after, md.err = r.g.fixDrift(ctx, st, md.rep, &f.apply, progress)
		}
		return md
	})
	if err := g.writeFleetDrift(drifts, format); err != nil {
		return err
	}
	if f.metricsFile != "" {
		ms := make([]render.FleetDrift, len(drifts))
		for i, md := range drifts {
			ms[i] = render.FleetDrift{Cluster: md.name, Report: md.final()}
		}
		if err := files.WriteAtomic(g.path(f.metricsFile), 0o644, func(w io.Writer) error { return render.FleetDriftMetrics(w, ms) }); err != nil {
			return fmt.Errorf("write metrics file: %w", err)
		}
	}
	code := 0
	for _, md := range drifts {
		switch {
		case md.err != nil:
			code = 1
		case !md.final().InSync() && code == 0:
			code = 2
		}
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// writeFleetDrift prints every member's drift report in format, in fleet
// order, then (text and Markdown) the fleet summary.
func (g *globals) writeFleetDrift(drifts []*memberDrift, format string) error {
	rows := make([]fleet.Row, len(drifts))
	docs := make([]fleet.Doc, len(drifts))
	for i, md := range drifts {
		rows[i], docs[i] = fleet.Row{Cluster: md.name, Text: driftSummary(md)}, fleet.Doc{Cluster: md.name}
		if md.err != nil {
			docs[i].Error = driftFailure(md)
		}
		if i > 0 && format != formatJSON {
			textsafe.Fprintln(g.stdout)
		}
		var b bytes.Buffer
		var err error
		switch {
		case format == formatJSON && md.rep != nil:
			err = render.DriftJSON(&b, md.rep, md.after)
			docs[i].JSON = b.Bytes()
		case format == formatMarkdown:
			fleet.WriteHeading(g.stdout, md.name, true)
			if md.rep != nil {
				err = render.DriftMarkdown(g.stdout, md.rep, md.after)
			}
		case format == formatText:
			fleet.WriteHeading(g.stdout, md.name, false)
			if md.rep != nil {
				err = render.DriftText(g.stdout, md.rep, render.TextOptions{Color: g.color(g.stdout)})
			}
			if md.fix {
				_, _ = io.Copy(g.stdout, &md.run.stdout)
			}
			if err == nil && md.after != nil {
				textsafe.Fprintf(g.stdout, "\nAfter the fix:\n")
				err = render.DriftText(g.stdout, md.after, render.TextOptions{Color: g.color(g.stdout)})
			}
		}
		if err != nil {
			return err
		}
		if md.err != nil && md.rep == nil && format != formatJSON {
			textsafe.Fprintf(g.stdout, "Not checked: %s.\n", g.markdownIf(format, driftFailure(md)))
		}
		_, _ = io.Copy(g.stderr, &md.run.stderr)
	}
	if format == formatJSON {
		return fleet.WriteJSON(g.stdout, "drift", docs)
	}
	fleet.WriteSummary(g.stdout, "Fleet drift:", "Drift", rows, format == formatMarkdown)
	return nil
}

// driftFailure says why a member was not checked, or not fixed.
func driftFailure(md *memberDrift) string {
	why := fleet.Failure(md.err)
	if _, printed := md.err.(*exitError); printed {
		why = "failed (see above)"
	}
	if md.fix {
		return "fix " + why
	}
	return why
}

// driftSummary is a member's row of the fleet drift summary.
func driftSummary(md *memberDrift) string {
	if md.err != nil {
		return driftFailure(md)
	}
	return fleet.DriftRow(md.rep, md.after)
}
