package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// memberPlan is what planning one member gave.
type memberPlan struct {
	name string
	run  *memberRun
	res  *stack.PlanResult
	// err is why the member has no plan (unreachable, refused, failed).
	err error
	// configErr is set when the member's configuration has errors, found
	// before any cluster call.
	configErr bool
}

// failed reports whether the member has no usable plan.
func (m *memberPlan) failed() bool { return m.err != nil }

// fleetPlanCommand is plan on the fleet of members.
func (g *globals) fleetPlanCommand(cmd *cobra.Command, members []fleetMember, f *planFlags, ff *fleetFlags, format string) error {
	if err := checkFleetFlags(cmd, ff, "repo", "ref"); err != nil {
		return err
	}
	return g.fleetPlan(cmd.Context(), members, f, ff, format)
}

// fleetPlan plans every selected member, at most ff.parallelism at once,
// and prints one section per member in fleet order, then the fleet
// summary. Exit status: 1 when a member failed (unreachable, refused, bad
// configuration) or has objects in the way; else, with
// --detailed-exitcode, 2 when a member has changes; else 0.
func (g *globals) fleetPlan(ctx context.Context, members []fleetMember, f *planFlags, ff *fleetFlags, format string) error {
	all := members
	members, err := selectMembers(members, ff.clusters)
	if err != nil {
		return err
	}
	plans := g.planMembers(ctx, members, f, ff.parallelism)
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
	if f.out != "" {
		if err := g.saveFleetPlan(f, format, plans, all); err != nil {
			return err
		}
	}
	return fleetPlanExit(plans, f.detailedExitCode)
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
		if mp == nil || !mp.configErr {
			continue
		}
		bad = true
		textsafe.Fprintf(g.stderr, "Cluster %q: the configuration evaluated for it has errors.\n", mp.name)
		_, _ = io.Copy(g.stderr, &mp.run.stderr)
		var ce *engine.ConfigError
		if !errors.As(mp.err, &ce) {
			textsafe.Fprintf(g.stderr, "Error: %v\n", mp.err)
		}
	}
	return bad
}

// writeFleetPlans prints every member's plan in format, in fleet order,
// then (text and Markdown) the fleet summary.
func (g *globals) writeFleetPlans(plans []*memberPlan, f *planFlags, format string) error {
	if format == formatJSON {
		return writeFleetJSON(g.stdout, plans)
	}
	for i, mp := range plans {
		if i > 0 {
			textsafe.Fprintln(g.stdout)
		}
		if format == formatMarkdown {
			textsafe.Fprintf(g.stdout, "## Cluster %s\n\n", render.MarkdownCode(mp.name))
		} else {
			textsafe.Fprintf(g.stdout, "Cluster %q:\n\n", mp.name)
		}
		if mp.err == nil {
			g.warnTargeted(mp.res.Plan)
			if err := renderPlan(mp.run.g, g.stdout, mp.res.Plan, mp.res.Config.Files, format, f.detail); err != nil {
				return err
			}
		} else {
			why := memberFailure(mp.err)
			if format == formatMarkdown {
				why = render.MarkdownText(why)
			}
			textsafe.Fprintf(g.stdout, "No plan: %s.\n", why)
		}
		_, _ = io.Copy(g.stderr, &mp.run.stderr)
	}
	return writeFleetSummary(g.stdout, plans, format)
}

// memberFailure says why a member has no plan: "unreachable: ..." when its
// cluster could not be reached, "failed: ..." otherwise.
func memberFailure(err error) string {
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, errUnreachable) {
		return "unreachable: " + oneLine(err)
	}
	return "failed: " + oneLine(err)
}

// errUnreachable marks an error opening a member's cluster.
var errUnreachable = errors.New("cannot open the cluster")

// oneLine is err's message on one line, for a summary row.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// writeFleetSummary prints one row per member: what its plan does, or why
// it has none.
func writeFleetSummary(w io.Writer, plans []*memberPlan, format string) error {
	failed := 0
	for _, mp := range plans {
		if mp.failed() || mp.res.Plan.Summary.Conflicts > 0 {
			failed++
		}
	}
	if format == formatMarkdown {
		textsafe.Fprintf(w, "\n## Fleet summary\n\n| Cluster | Plan |\n| --- | --- |\n")
		for _, mp := range plans {
			textsafe.Fprintf(w, "| %s | %s |\n", render.MarkdownCode(mp.name), render.MarkdownText(memberSummary(mp)))
		}
		return nil
	}
	textsafe.Fprintf(w, "\nFleet: %d %s planned, %d failed.\n", len(plans)-failed, render.PluralWord(len(plans)-failed, "cluster", "clusters"), failed)
	width := 0
	for _, mp := range plans {
		width = max(width, len(mp.name))
	}
	for _, mp := range plans {
		textsafe.Fprintf(w, "  %-*s  %s\n", width, mp.name, memberSummary(mp))
	}
	return nil
}

// memberSummary is a member's row of the fleet summary.
func memberSummary(mp *memberPlan) string {
	if mp.failed() {
		return memberFailure(mp.err)
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

// fleetJSONMember is one member of plan --format json on a fleet.
type fleetJSONMember struct {
	Cluster string          `json:"cluster"`
	Plan    json.RawMessage `json:"plan,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// writeFleetJSON prints {"clusters": [...]}: every member's plan document
// (as plan --format json prints it) or its error, in fleet order.
func writeFleetJSON(w io.Writer, plans []*memberPlan) error {
	var doc struct {
		Clusters []fleetJSONMember `json:"clusters"`
	}
	for _, mp := range plans {
		m := fleetJSONMember{Cluster: mp.name}
		if mp.failed() {
			m.Error = memberFailure(mp.err)
		} else {
			var b strings.Builder
			if err := render.JSON(&b, mp.res.Plan); err != nil {
				return err
			}
			m.Plan = json.RawMessage(b.String())
		}
		doc.Clusters = append(doc.Clusters, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// fleetPlanExit is a fleet plan's exit status (see fleetPlan).
func fleetPlanExit(plans []*memberPlan, detailed bool) error {
	changes := false
	for _, mp := range plans {
		if mp.failed() || mp.res.Plan.Summary.Conflicts > 0 {
			return &exitError{code: 1}
		}
		changes = changes || mp.res.Plan.HasChanges()
	}
	if detailed && changes {
		return &exitError{code: 2}
	}
	return nil
}
