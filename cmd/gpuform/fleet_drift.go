package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

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
	err  error
}

// fleetDriftCommand is drift on the fleet of members: every selected
// member checked at once, at most --fleet-parallelism, one report per
// member in fleet order, then the fleet summary. Exit status: 1 when a
// member could not be checked, else 2 when a member drifted, else 0.
// --fix is refused: fixing a fleet is apply --auto-approve on it.
func (g *globals) fleetDriftCommand(cmd *cobra.Command, members []fleetMember, f *driftFlags, ff *fleetFlags, format string) error {
	if err := checkFleetFlags(cmd, ff, "repo", "ref"); err != nil {
		return err
	}
	if f.fix {
		return fmt.Errorf("drift --fix is not taken on a fleet: run gpuform apply --auto-approve on it (with --cluster NAME for some members)")
	}
	members, err := selectMembers(members, ff.clusters)
	if err != nil {
		return err
	}
	drifts := forEachMember(cmd.Context(), members, ff.parallelism, func(ctx context.Context, _ int, m fleetMember) *memberDrift {
		r := g.member(m)
		defer r.close()
		md := &memberDrift{name: m.name, run: r}
		md.rep, md.err = r.memberStack(m, connection{inCluster: true}).Drift(ctx)
		if md.err != nil {
			md.err = r.g.fail(md.err, "")
		}
		return md
	})
	if err := g.writeFleetDrift(drifts, format); err != nil {
		return err
	}
	if f.metricsFile != "" {
		ms := make([]render.FleetDrift, len(drifts))
		for i, md := range drifts {
			ms[i] = render.FleetDrift{Cluster: md.name, Report: md.rep}
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
		case !md.rep.InSync() && code == 0:
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
			err = render.DriftJSON(&b, md.rep, nil)
			docs[i].JSON = b.Bytes()
		case format == formatMarkdown:
			fleet.WriteHeading(g.stdout, md.name, true)
			if md.rep != nil {
				err = render.DriftMarkdown(g.stdout, md.rep, nil)
			}
		case format == formatText:
			fleet.WriteHeading(g.stdout, md.name, false)
			if md.rep != nil {
				err = render.DriftText(g.stdout, md.rep, render.TextOptions{Color: g.color(g.stdout)})
			}
		}
		if err != nil {
			return err
		}
		if md.err != nil && format != formatJSON {
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

// driftFailure says why a member was not checked.
func driftFailure(md *memberDrift) string {
	if _, printed := md.err.(*exitError); printed {
		return "failed (see above)"
	}
	return fleet.Failure(md.err)
}

// driftSummary is a member's row of the fleet drift summary.
func driftSummary(md *memberDrift) string {
	if md.err != nil {
		return driftFailure(md)
	}
	if md.rep.InSync() {
		return "in sync"
	}
	counts := md.rep.Counts()
	var parts []string
	for _, c := range drift.Classes() {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
		}
	}
	return "drifted: " + strings.Join(parts, ", ")
}
