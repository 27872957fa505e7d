package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/fleet"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/providers/git"
)

// fleetMember is one cluster of a fleet: its name and how its
// configuration is loaded (the fleet's directory evaluated for it).
type fleetMember struct {
	name string
	// dir is the member's configuration directory.
	dir string
	// load are the load options, with Cluster set to the member.
	load config.Options
}

// fleetSource lists a fleet's members; tests give one to globals.fleet.
type fleetSource func(ctx context.Context) ([]fleetMember, error)

// fleetFlags select the members and bound the work.
type fleetFlags struct {
	clusters    []string
	parallelism int
}

// addFleetFlags adds --cluster and --fleet-parallelism to fl.
func addFleetFlags(fl *pflag.FlagSet, f *fleetFlags) {
	fl.StringArrayVar(&f.clusters, "cluster", nil, "on a fleet, work on the member `NAME` only (repeatable; default: every member)")
	fl.IntVar(&f.parallelism, "fleet-parallelism", fleet.DefaultParallelism, "on a fleet, how many members to work on at once")
}

// isFleet reports whether cfg is a fleet loaded for none of its members.
func isFleet(cfg *config.Config) bool {
	return cfg != nil && len(cfg.Fleet) > 0 && (cfg.Cluster == nil || cfg.Cluster.Name == "")
}

// fleetOf returns the fleet's members when err says the configuration is
// a fleet (stack.FleetError), else nil.
func (g *globals) fleetOf(err error) []fleetMember {
	var fe *stack.FleetError
	if !errors.As(err, &fe) {
		return nil
	}
	opts, _ := g.loadOptions() // read once already, without errors
	return membersOf(fe.Members, g.dir(), opts)
}

// membersOf is every member of fleet, each loaded from dir for itself.
func membersOf(fleet []*config.Cluster, dir string, opts config.Options) []fleetMember {
	ms := make([]fleetMember, 0, len(fleet))
	for _, c := range fleet {
		o := opts
		o.Cluster = c.Name
		ms = append(ms, fleetMember{name: c.Name, dir: dir, load: o})
	}
	return ms
}

// loadFleet lists the fleet of the configuration directory: globals.fleet
// when set (tests), else the members the configuration names; nil for a
// single-cluster configuration or one that does not load (the
// single-cluster path then reports why).
func (g *globals) loadFleet(ctx context.Context) ([]fleetMember, error) {
	if g.fleet != nil {
		return g.fleet(ctx)
	}
	opts, diags := g.loadOptions()
	if diags.HasErrors() {
		return nil, nil
	}
	cfg, loaded, diags := config.LoadFleetDir(g.dir(), opts)
	if diags.HasErrors() || !isFleet(cfg) {
		return nil, nil
	}
	// Member stacks take their configurations from here: warnings once.
	g.writeDiags(cfg, diags)
	g.keepFleet(loaded)
	return membersOf(cfg.Fleet, g.dir(), opts), nil
}

// addMemberFlag adds --cluster NAME to a command that works on one
// cluster: on a fleet, the member it works on (config.Options.Cluster).
func addMemberFlag(fl *pflag.FlagSet, g *globals) {
	fl.StringVar(&g.onMember, "cluster", "", "on a fleet, the member `NAME` to work on")
}

// selectMembers narrows members to the --cluster names (fleet.Select).
func selectMembers(members []fleetMember, names []string) ([]fleetMember, error) {
	return fleet.Select(members, func(m fleetMember) string { return m.name }, names)
}

// notOnFleet says why a flag is refused on a fleet run.
var notOnFleet = map[string]string{
	"kubeconfig": "each member's cluster block says how it is reached; select members with --cluster NAME",
	"context":    "each member's cluster block says how it is reached; select members with --cluster NAME",
	"simulated":  "each member's cluster block says how it is reached; select members with --cluster NAME",
	"repo":       "a fleet's members are read from the configuration directory",
	"ref":        "a fleet's members are read from the configuration directory",
	"out":        "save a fleet plan with gpuform plan --out FILE, without --base",
	"cluster":    "a saved fleet plan applies the members it was made for (select them with plan --cluster NAME --out FILE)",
}

// checkFleetFlags refuses, on a fleet run, the flags that name one
// cluster and the others named (see notOnFleet); f's bound must be
// positive.
func checkFleetFlags(cmd *cobra.Command, f *fleetFlags, others ...string) error {
	for _, name := range append([]string{"kubeconfig", "context", "simulated"}, others...) {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return fmt.Errorf("--%s is not taken on a fleet: %s", name, notOnFleet[name])
		}
	}
	if f.parallelism < 1 {
		return fmt.Errorf("--fleet-parallelism must be at least 1, not %d", f.parallelism)
	}
	return nil
}

// explicitFleet returns the fleet's members, before any single-cluster
// work, when the run is known to be on a fleet: globals.fleet is set
// (tests), or --cluster or --fleet-parallelism was given (and then a
// configuration that is no fleet is an error). nil otherwise: the
// single-cluster path finds out (fleetOf).
func (g *globals) explicitFleet(cmd *cobra.Command) ([]fleetMember, error) {
	given := ""
	for _, name := range []string{"cluster", "fleet-parallelism"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			given = name
		}
	}
	if g.fleet == nil && given == "" {
		return nil, nil
	}
	members, err := g.loadFleet(cmd.Context())
	if err == nil && len(members) == 0 {
		err = fmt.Errorf("--%s selects members of a fleet, and the configuration in %s names no fleet (or does not load: gpuform validate says why)", given, g.dir())
	}
	return members, err
}

// forEachMember runs fn for every member, at most n at once, and returns
// the results in fleet order (fleet.Each).
func forEachMember[T any](ctx context.Context, members []fleetMember, n int, fn func(ctx context.Context, i int, m fleetMember) T) []T {
	return fleet.Each(ctx, len(members), n, func(ctx context.Context, i int) T { return fn(ctx, i, members[i]) })
}

// memberRun is one member's share of a fleet command: its own globals
// writing to buffers, so that members running at once never interleave
// and their output is printed in fleet order.
type memberRun struct {
	g              *globals
	stdout, stderr bytes.Buffer
	// close releases what the member's stack holds open (a repository).
	close func()
}

// member returns a memberRun over m: g with m's directory and buffers.
func (g *globals) member(m fleetMember) *memberRun {
	r := &memberRun{close: func() {}}
	mg := *g
	mg.chdir = m.dir
	mg.stdout, mg.stderr = &r.stdout, &r.stderr
	mg.fleet = nil
	r.g = &mg
	return r
}

// memberStack is the pipeline over m's configuration and the cluster its
// cluster block names.
// An error opening the cluster is marked fleet.ErrUnreachable; r.close releases
// the source.
func (r *memberRun) memberStack(m fleetMember, c connection) *stack.Stack {
	src := git.NewSource(git.SourceOptions{Dir: m.dir, Env: r.g.env})
	r.close = src.Close
	connect := r.g.connect(c)
	open := func(ctx context.Context, cfg *config.Config) (stack.Cluster, error) {
		cl, err := connect(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", fleet.ErrUnreachable, err)
		}
		return cl, nil
	}
	opts := r.g.stackOptions(m.load)
	opts.Loaded = r.g.loadedMember(m)
	return stack.New(src, open, opts)
}

// keepFleet keeps the members loaded with a fleet's listing, for memberStack.
func (g *globals) keepFleet(members []*config.Config) { g.loadedFleet = members }

// loadedMember is m's configuration loaded with the fleet (nil: none).
func (g *globals) loadedMember(m fleetMember) *config.Config {
	for _, cfg := range g.loadedFleet {
		if cfg.Cluster != nil && cfg.Cluster.Name == m.name && cfg.Dir == m.dir {
			return cfg
		}
	}
	return nil
}

// indexOf is the position of the member called name, -1 if none.
func indexOf(members []fleetMember, name string) int {
	return slices.IndexFunc(members, func(m fleetMember) bool { return m.name == name })
}
