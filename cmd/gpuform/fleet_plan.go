package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/fleet"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
)

// memberPlan is what planning one member gave.
type memberPlan struct {
	name string
	run  *memberRun
	res  *stack.PlanResult
	// err is why the member has no plan; configErr says its configuration
	// has errors (found before any cluster call).
	err       error
	configErr bool
}

// failed reports whether the member has no plan apply could take.
func (m *memberPlan) failed() bool { return m.err != nil || m.res.Plan.Summary.Conflicts > 0 }

// fleetPlanCommand is plan on the fleet of members: every selected member
// planned, at most --fleet-parallelism at once, one section per member in
// fleet order, then the fleet summary. Exit status: 1 when a member failed
// (unreachable, refused, bad configuration) or has objects in the way;
// else, with --detailed-exitcode, 2 when a member has changes; else 0.
func (g *globals) fleetPlanCommand(cmd *cobra.Command, all []fleetMember, f *planFlags, ff *fleetFlags, format string) error {
	if err := checkFleetFlags(cmd, ff, "repo", "ref"); err != nil {
		return err
	}
	members, err := selectMembers(all, ff.clusters)
	if err != nil {
		return err
	}
	plans := g.planMembers(cmd.Context(), members, f, ff.parallelism)
	defer func() {
		for _, mp := range plans {
			mp.run.close()
		}
	}()
	if g.fleetConfigErrors(plans) {
		return &exitError{code: 1}
	}
	if err := g.writeFleetPlans(plans, f, format); err != nil {
		return err
	}
	changes := false
	for _, mp := range plans {
		if mp.failed() {
			if f.out != "" {
				textsafe.Fprintf(g.stderr, "Error: the fleet plan was not saved to %s: cluster %q has no plan apply could take (%s).\n", f.out, mp.name, memberSummary(mp))
			}
			return &exitError{code: 1}
		}
		changes = changes || mp.res.Plan.HasChanges()
	}
	if f.out != "" {
		if err := g.saveFleetPlan(f, format, plans, all); err != nil {
			return err
		}
	}
	if f.detailedExitCode && changes {
		return &exitError{code: 2}
	}
	return nil
}

// planMembers compiles every member's configuration first, so that a bad
// one ends the run before any cluster call, then plans them.
func (g *globals) planMembers(ctx context.Context, members []fleetMember, f *planFlags, n int) []*memberPlan {
	stacks := make([]*stack.Stack, len(members))
	plans := forEachMember(ctx, members, n, func(ctx context.Context, i int, m fleetMember) *memberPlan {
		mp := &memberPlan{name: m.name, run: g.member(m)}
		stacks[i] = mp.run.memberStack(m, connection{})
		if _, err := stacks[i].Compile(ctx); err != nil {
			mp.err, mp.configErr = err, true
		}
		return mp
	})
	for _, mp := range plans {
		if mp.configErr {
			return plans
		}
	}
	forEachMember(ctx, members, n, func(ctx context.Context, i int, m fleetMember) struct{} {
		mp := plans[i]
		mp.res, mp.err = stacks[i].Plan(ctx, stack.PlanOptions{Adopt: f.adopt, Destroy: f.destroy, Targets: f.targets})
		if mp.err == nil && mp.res.Plan.Summary.Conflicts > 0 {
			_ = mp.run.g.planExit(mp.res.Plan, false) // prints the conflicts to the member's stderr
		}
		return struct{}{}
	})
	return plans
}

// fleetConfigErrors prints the members' configuration errors, in fleet
// order, and reports whether there were any.
func (g *globals) fleetConfigErrors(plans []*memberPlan) bool {
	bad := false
	for _, mp := range plans {
		if !mp.configErr {
			continue
		}
		bad = true
		textsafe.Fprintf(g.stderr, "Cluster %q: the configuration evaluated for it has errors.\n", mp.name)
		_, _ = io.Copy(g.stderr, &mp.run.stderr)
		if ce := (*engine.ConfigError)(nil); !errors.As(mp.err, &ce) {
			textsafe.Fprintf(g.stderr, "Error: %v\n", mp.err)
		}
	}
	return bad
}

// writeFleetPlans prints every member's plan in format, in fleet order,
// then (text and Markdown) the fleet summary.
func (g *globals) writeFleetPlans(plans []*memberPlan, f *planFlags, format string) error {
	if format == formatJSON {
		docs := make([]fleet.Doc, len(plans))
		for i, mp := range plans {
			docs[i] = fleet.Doc{Cluster: mp.name}
			var b bytes.Buffer
			if mp.err != nil {
				docs[i].Error = fleet.Failure(mp.err)
			} else if err := render.JSON(&b, mp.res.Plan); err != nil {
				return err
			}
			docs[i].JSON = b.Bytes()
		}
		return fleet.WriteJSON(g.stdout, "plan", docs)
	}
	rows := make([]fleet.Row, len(plans))
	failed := 0
	for i, mp := range plans {
		if i > 0 {
			textsafe.Fprintln(g.stdout)
		}
		fleet.WriteHeading(g.stdout, mp.name, format == formatMarkdown)
		if mp.err == nil {
			g.warnTargeted(mp.res.Plan)
			if err := renderPlan(mp.run.g, g.stdout, mp.res.Plan, mp.res.Config.Files, format, f.detail); err != nil {
				return err
			}
		} else {
			textsafe.Fprintf(g.stdout, "No plan: %s.\n", g.markdownIf(format, fleet.Failure(mp.err)))
		}
		_, _ = io.Copy(g.stderr, &mp.run.stderr)
		rows[i] = fleet.Row{Cluster: mp.name, Text: memberSummary(mp)}
		if mp.failed() {
			failed++
		}
	}
	title := fmt.Sprintf("Fleet: %d %s planned, %d failed.", len(plans)-failed, pluralClusters(len(plans)-failed), failed)
	fleet.WriteSummary(g.stdout, title, "Plan", rows, format == formatMarkdown)
	return nil
}

// markdownIf escapes s for Markdown when format is Markdown.
func (g *globals) markdownIf(format, s string) string {
	if format == formatMarkdown {
		return render.MarkdownText(s)
	}
	return s
}

// memberSummary is a member's row of the fleet summary.
func memberSummary(mp *memberPlan) string {
	if mp.err != nil {
		return fleet.Failure(mp.err)
	}
	s := mp.res.Plan.Summary
	row := fmt.Sprintf("%d to add, %d to change, %d to destroy", s.Add, s.Change, s.Destroy)
	if !mp.res.Plan.HasChanges() {
		row = "no changes"
	}
	if s.Conflicts > 0 {
		row += fmt.Sprintf(", %d in the way", s.Conflicts)
	}
	return row
}

// pluralClusters is "cluster" or "clusters" for n.
func pluralClusters(n int) string { return render.PluralWord(n, "cluster", "clusters") }

// saveFleetPlan writes the members' plans to --out as one fleet plan file
// (fleet.WritePlan), each signed when a plan key is set; all is every
// member of the fleet.
func (g *globals) saveFleetPlan(f *planFlags, format string, plans []*memberPlan, all []fleetMember) error {
	key, err := engine.LoadPlanKey(g.env)
	if err != nil {
		return err
	}
	pfs := make([]*engine.PlanFile, len(plans))
	for i, mp := range plans {
		pf, err := engine.NewPlanFile(mp.res.Plan, version, mp.res.Config.Hash, mp.res.Context, f.allowSensitive)
		if err != nil {
			return fmt.Errorf("save the plan of cluster %q: %w", mp.name, err)
		}
		pf.Ref = git.RefName(mp.run.g.dir(), g.env, f.refName, f.ref)
		pf.Fleet = &engine.FleetBinding{Member: mp.name}
		pfs[i] = pf
	}
	names := make([]string, len(all))
	for i, m := range all {
		names[i] = m.name
	}
	if err := files.WriteAtomic(g.path(f.out), 0o600, func(w io.Writer) error { return fleet.WritePlan(w, pfs, names, key) }); err != nil {
		return fmt.Errorf("save plan to %s: %w", f.out, err)
	}
	if format == formatText {
		textsafe.Fprintf(g.stdout, "\nSaved the fleet plan of %d %s to %s. To apply exactly this plan, run:\n    gpuform apply --auto-approve %s\n", len(plans), pluralClusters(len(plans)), f.out, f.out)
	}
	return nil
}
