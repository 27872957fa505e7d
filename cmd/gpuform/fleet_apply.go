package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/fleet"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
)

// memberApply is what applying to one member did.
type memberApply struct {
	name string
	run  *memberRun
	res  *stack.ApplyResult
	// err is the member's result as the single-cluster apply returns it
	// (printed already, or the reason it failed).
	err error
}

// fleetApplyCommand is apply on the fleet of members: every selected
// member applied, at most --fleet-parallelism at once, each under its own
// lock. Without a saved plan it needs --auto-approve:
// one confirmation for plans that are made under each member's lock at a
// different time would approve what nobody saw.
func (g *globals) fleetApplyCommand(cmd *cobra.Command, members []fleetMember, f *applyFlags, ff *fleetFlags) error {
	if err := checkFleetFlags(cmd, ff); err != nil {
		return err
	}
	if !f.autoApprove {
		return fmt.Errorf("apply on a fleet asks no confirmation: review gpuform plan and run apply --auto-approve, or apply a saved fleet plan (plan --out FILE)")
	}
	ctx := cmd.Context()
	members, err := selectMembers(members, ff.clusters)
	if err != nil {
		return err
	}
	stacks := make([]*stack.Stack, len(members))
	runs := forEachMember(ctx, members, ff.parallelism, func(ctx context.Context, i int, m fleetMember) *memberPlan {
		mp := &memberPlan{name: m.name, run: g.member(m)}
		stacks[i] = mp.run.memberStack(m, connection{})
		if _, err := stacks[i].Compile(ctx); err != nil {
			mp.err, mp.configErr = err, true
		}
		return mp
	})
	defer func() {
		for _, mp := range runs {
			mp.run.close()
		}
	}()
	if g.fleetConfigErrors(runs) {
		return &exitError{code: 1}
	}
	applied := forEachMember(ctx, members, ff.parallelism, func(ctx context.Context, i int, m fleetMember) *memberApply {
		r := runs[i].run
		opts, pr := r.g.applyOptions(f, &r.stdout)
		opts.Planned = func(cfg *config.Config, p *engine.Plan) error {
			return renderPlan(r.g, &r.stdout, p, cfg.Files, formatText, false)
		}
		res, err := stacks[i].Apply(ctx, opts)
		return &memberApply{name: m.name, run: r, res: res, err: r.g.applied(res, err, pr, "")}
	})
	return g.fleetApplied(applied)
}

// fleetApplySaved applies a saved fleet plan (b, read from path): it
// refuses one whose fleet changed since (fleet.Changed), then applies every
// member's plan as apply PLANFILE does, each under its member's lock.
func (g *globals) fleetApplySaved(ctx context.Context, path string, b []byte, f *applyFlags, ff *fleetFlags) error {
	key, err := engine.LoadPlanKey(g.env)
	if err != nil {
		return err
	}
	pfs, err := fleet.ReadPlan(b, key)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !pfs[0].Signed() {
		textsafe.Fprintf(g.stderr, "Warning: %s %s.\n", path, engine.UnsignedWarning)
	}
	bind := pfs[0].Fleet
	members, err := g.loadFleet(ctx)
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return fmt.Errorf("%s is a fleet plan, and the configuration in %s names no fleet now; make the plan again", path, g.dir())
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.name
	}
	hashes, err := g.fleetHashes(ctx, members, bind.Planned)
	if err != nil {
		return err
	}
	if why := fleet.Changed(bind, names, hashes); why != "" {
		textsafe.Fprintf(g.stderr, "Error: the fleet changed since the plan %s was made: %s. Make the plan again.\n", path, why)
		return &exitError{code: 1}
	}
	f.binding.Ref = git.RefName(g.dir(), g.env, f.binding.Ref, "")
	for _, pf := range pfs {
		// Every member's binding is checked before any member is applied
		// (ApplyPlan checks it again).
		if err := pf.CheckBinding(f.binding); err != nil {
			return fmt.Errorf("%s: cluster %q: %w", path, pf.Fleet.Member, err)
		}
	}
	planned := make([]fleetMember, len(pfs))
	for i, pf := range pfs {
		planned[i] = members[indexOf(members, pf.Fleet.Member)]
	}
	applied := forEachMember(ctx, planned, ff.parallelism, func(ctx context.Context, i int, m fleetMember) *memberApply {
		return g.applyMemberPlan(ctx, m, pfs[i], key, f)
	})
	return g.fleetApplied(applied)
}

// applyMemberPlan applies one member's saved plan on the cluster its
// cluster block names (the saved plan's context must match it).
func (g *globals) applyMemberPlan(ctx context.Context, m fleetMember, pf *engine.PlanFile, key engine.PlanKey, f *applyFlags) *memberApply {
	r := g.member(m)
	defer r.close()
	ma := &memberApply{name: m.name, run: r}
	cfg, diags := r.memberStack(m, connection{}).Validate(ctx)
	if diags.HasErrors() {
		ma.err = &engine.ConfigError{Diags: diags}
		return ma
	}
	connect := r.g.connect(connection{savedContext: pf.Context})
	open := func(ctx context.Context, _ *config.Config) (stack.Cluster, error) {
		cl, err := connect(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", fleet.ErrUnreachable, err)
		}
		return cl, nil
	}
	st := stack.New(nil, open, r.g.stackOptions(m.load))
	opts, pr := r.g.applyOptions(f, &r.stdout)
	opts.PlanKey, opts.Binding = key, &f.binding
	opts.Planned = func(_ *config.Config, p *engine.Plan) error {
		_, err := textsafe.Fprintf(&r.stdout, "Applying the saved plan of cluster %q to stack %s on %s.\n\n", m.name, p.Stack, pf.Source)
		return err
	}
	ma.res, ma.err = st.ApplyPlan(ctx, pf, opts)
	ma.err = r.g.applied(ma.res, ma.err, pr, "")
	return ma
}

// fleetApplied prints every member's apply in fleet order, then the fleet
// summary, and returns exit 1 when any member failed.
func (g *globals) fleetApplied(applied []*memberApply) error {
	failed := 0
	for i, ma := range applied {
		if i > 0 {
			textsafe.Fprintln(g.stdout)
		}
		textsafe.Fprintf(g.stdout, "Cluster %q:\n\n", ma.name)
		_, _ = io.Copy(g.stdout, &ma.run.stdout)
		_, _ = io.Copy(g.stderr, &ma.run.stderr)
		if ma.err != nil {
			failed++
		}
	}
	rows := make([]fleet.Row, len(applied))
	for i, ma := range applied {
		rows[i] = fleet.Row{Cluster: ma.name, Text: applySummary(ma)}
	}
	fleet.WriteSummary(g.stdout, fmt.Sprintf("Fleet: %d %s applied, %d failed.", len(applied)-failed, pluralClusters(len(applied)-failed), failed), "Apply", rows, false)
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// applySummary is a member's row of the fleet apply summary.
func applySummary(ma *memberApply) string {
	var counts string
	if ma.res != nil {
		counts = fleet.ApplyCounts(ma.res.Report)
	}
	switch {
	case ma.err == nil && counts == "":
		return "no changes"
	case ma.err == nil:
		return counts
	case counts != "":
		return "failed: " + counts
	}
	if _, printed := ma.err.(*exitError); printed {
		return "failed (see above)"
	}
	return fleet.Failure(ma.err)
}

// readApplyArg reads apply's PLANFILE argument when it is a fleet plan;
// nil when it is one cluster's saved plan (or cannot be read: the
// single-cluster path says why).
func (g *globals) readApplyArg(path string) []byte {
	b, err := files.ReadLimited(g.path(path), engine.MaxPlanFileSize)
	if err != nil || !fleet.IsPlan(b) {
		return nil
	}
	return b
}

// fleetHashes loads every planned member's configuration now and returns
// its hash, by name; a member whose configuration has errors ends the run.
func (g *globals) fleetHashes(ctx context.Context, members []fleetMember, planned []engine.FleetMemberHash) (map[string]string, error) {
	hashes := map[string]string{}
	for _, m := range members {
		if !slices.ContainsFunc(planned, func(p engine.FleetMemberHash) bool { return p.Name == m.name }) {
			continue
		}
		r := g.member(m)
		cfg, diags := r.memberStack(m, connection{}).Validate(ctx)
		r.close()
		if diags.HasErrors() {
			g.writeDiags(cfg, diags)
			return nil, &exitError{code: 1}
		}
		hashes[m.name] = cfg.Hash
	}
	return hashes, nil
}
