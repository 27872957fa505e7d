package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

type applyFlags struct {
	autoApprove     bool
	parallelism     int
	lockTimeout     time.Duration
	migTimeout      time.Duration
	allowDestroy    bool
	maxDeletes      int
	allowDisruption bool
	adopt           bool
	binding         engine.PlanBinding
	// destroy plans to delete everything the stack owns (destroy);
	// targets narrow the plan (--target).
	destroy bool
	targets []string
}

func newApplyCommand(g *globals) *cobra.Command {
	var f applyFlags
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "apply [PLANFILE | DIR]",
		Short: "Apply the configuration (or a saved plan) to the cluster",
		Long: "apply takes the stack's lock, plans, shows the plan and asks for confirmation (unless\n" +
			"--auto-approve), then applies the changes in dependency order with --parallelism changes in\n" +
			"flight. Given a plan file saved by plan --out, it applies exactly that plan without reading\n" +
			"the configuration, after checking that nothing it read has changed since. Given a directory\n" +
			"(or .hcl files), it applies the configuration there, as --chdir DIR does.\n\n" +
			"A failed change skips its dependents and lets independent changes go on; apply then prints\n" +
			"what was applied, failed and skipped and exits 1. Running apply again converges.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && config.IsConfigArg(g.chdir, args[0]) {
				if err := g.useDirArg(args, ""); err != nil {
					return err
				}
				args = nil
			}
			if len(args) == 1 {
				if len(f.targets) > 0 {
					return fmt.Errorf("--target narrows a plan as it is made: make the saved plan with plan --target --out FILE instead")
				}
				if b := g.readApplyArg(args[0]); b != nil {
					if err := checkFleetFlags(cmd, &ff, "cluster"); err != nil {
						return err
					}
					return g.fleetApplySaved(cmd.Context(), args[0], b, &f, &ff)
				}
				return g.applySaved(cmd.Context(), args[0], &f)
			}
			if members, err := g.explicitFleet(cmd); err != nil || members != nil {
				if err != nil {
					return err
				}
				return g.fleetApplyCommand(cmd, members, &f, &ff)
			}
			err := g.applyConfig(cmd.Context(), &f)
			if members := g.fleetOf(err); members != nil {
				return g.fleetApplyCommand(cmd, members, &f, &ff)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.autoApprove, "auto-approve", false, "apply without asking for confirmation")
	fl.IntVar(&f.parallelism, "parallelism", engine.DefaultParallelism, "how many changes to apply at once")
	fl.DurationVar(&f.lockTimeout, "lock-timeout", 0, "how long to wait for the stack's lock (0: fail at once if held)")
	fl.DurationVar(&f.migTimeout, "mig-timeout", 15*time.Minute, "how long to wait for one node's MIG re-partitioning before failing its change")
	fl.BoolVar(&f.allowDestroy, "allow-destroy", false, "allow deleting protected tenants' namespaces and more than --max-deletes objects")
	fl.IntVar(&f.maxDeletes, "max-deletes", engine.DefaultMaxDeletes, "most objects one apply may delete without --allow-destroy")
	fl.BoolVar(&f.allowDisruption, "allow-disruption", false, "allow re-partitioning MIG, or moving a pool between the device plugin and DRA, on nodes with running GPU pods")
	fl.BoolVar(&f.adopt, "adopt", false, "take over existing objects in the way instead of failing")
	fl.StringVar(&f.binding.Ref, "ref-name", "", "the git `REF` (branch) apply runs from, which a signed plan must have been made from (default: $"+engine.RefEnv+", else the checked-out branch)")
	fl.BoolVar(&f.binding.AllowOtherRef, "allow-other-ref", false, "apply a signed plan made from another ref, or where either ref is unknown")
	fl.DurationVar(&f.binding.MaxAge, "plan-max-age", engine.DefaultPlanMaxAge, "refuse a signed plan made longer ago than this (0: no limit)")
	addTargetFlag(fl, &f.targets)
	addFleetFlags(fl, &ff)
	return cmd
}

// applyConfig plans under the lock, shows the plan, asks, and applies.
func (g *globals) applyConfig(ctx context.Context, f *applyFlags) error {
	st, done, err := g.newStack("", "", connection{})
	if err != nil {
		return err
	}
	defer done()
	opts, pr := g.applyOptions(f, g.stdout)
	opts.Planned = func(cfg *config.Config, p *engine.Plan) error {
		g.warnTargeted(p)
		return renderPlan(g, g.stdout, p, cfg.Files, formatText, false)
	}
	if !f.autoApprove {
		opts.Approve = func(ctx context.Context, p *engine.Plan) error { return g.confirm(ctx, p) }
	}
	res, err := st.Apply(ctx, opts)
	return g.applied(res, err, pr, "")
}

// applySaved applies a saved plan after checking that it is not stale.
func (g *globals) applySaved(ctx context.Context, path string, f *applyFlags) error {
	pf, key, err := g.readPlanFile(g.path(path))
	if err != nil {
		return err
	}
	if pf.Fleet != nil {
		return fmt.Errorf("%s is the plan of cluster %q taken out of a fleet plan: apply the fleet plan file it came from", path, pf.Fleet.Member)
	}
	st := stack.New(nil, g.connect(connection{savedContext: pf.Context}), g.stackOptions(config.Options{}))
	opts, pr := g.applyOptions(f, g.stdout)
	opts.PlanKey, opts.Binding = key, &f.binding
	opts.Planned = func(_ *config.Config, p *engine.Plan) error {
		g.warnTargeted(p)
		_, err := textsafe.Fprintf(g.stdout, "Applying the saved plan %s to stack %s on cluster %s.\n\n", path, p.Stack, pf.Source)
		return err
	}
	f.binding.Ref = git.RefName(g.dir(), g.env, f.binding.Ref, "")
	res, err := st.ApplyPlan(ctx, pf, opts)
	return g.applied(res, err, pr, path)
}

// applyOptions are the pipeline's apply options from f, with progress
// printed to out.
func (g *globals) applyOptions(f *applyFlags, out io.Writer) (stack.ApplyOptions, *render.ApplyProgress) {
	pr := &render.ApplyProgress{W: out, TTY: g.color(out), Verbose: g.verbosity >= 1}
	return stack.ApplyOptions{
		Adopt:      f.adopt,
		Destroy:    f.destroy,
		Targets:    f.targets,
		Safety:     engine.SafetyOptions{AllowDestroy: f.allowDestroy, MaxDeletes: f.maxDeletes, AllowDisruption: f.allowDisruption},
		Engine:     engine.ApplyOptions{Parallelism: f.parallelism, Progress: pr.Event, MIGTimeout: f.migTimeout},
		LockHolder: kubernetes.DefaultHolder(),
		LockWait:   f.lockTimeout,
		LockLost: func(lost *engine.LockLostError) {
			textsafe.Fprintf(g.stderr, "Error: %v; no new change starts, and changes in flight are cut.\n", lost)
		},
	}, pr
}

// applied prints what an apply did (its account, a refusal, a lock that
// stayed) in the order it happened and returns the command's result. path
// is the saved plan applied, "" for the configuration.
func (g *globals) applied(res *stack.ApplyResult, err error, pr *render.ApplyProgress, path string) error {
	switch {
	case err != nil:
		err = g.fail(err, path)
	case res.Report != nil:
		pr.Clear()
		err = g.report(pr.W, res.Report, res.Stopped, res.Plan != nil && res.Plan.Destroy)
	case path != "" && !res.Plan.HasChanges():
		textsafe.Fprintln(g.stdout, "No changes. The saved plan has nothing to apply.")
	}
	if res != nil && res.UnlockErr != nil {
		textsafe.Fprintf(g.stderr, "Warning: %v; run gpuform force-unlock %s if the lock stays.\n", res.UnlockErr, res.LockID)
	}
	return err
}

// fail prints the pipeline's refusals (render.Refusal) and returns exit
// 1; other errors are returned for main to print. path is a saved plan's
// file.
func (g *globals) fail(err error, path string) error {
	if !render.Refusal(g.stderr, err, path, g.color(g.stderr)) {
		return err
	}
	return &exitError{code: 1}
}

// confirm asks for "yes" on a terminal, naming the stack and cluster of
// p; Ctrl-C cancels.
func (g *globals) confirm(ctx context.Context, p *engine.Plan) error {
	in, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		textsafe.Fprintln(g.stderr, "Error: apply needs confirmation, but standard input is not a terminal. Review the plan above and run apply with --auto-approve, or apply a saved plan file.")
		return &exitError{code: 1}
	}
	textsafe.Fprint(g.stdout, render.ApplyQuestion(p))
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	var line string
	select {
	case line = <-answer:
	case <-ctx.Done():
		textsafe.Fprintln(g.stdout, "\n\nApply cancelled.")
		return &exitError{code: 1}
	}
	if strings.TrimSpace(line) != "yes" {
		textsafe.Fprintln(g.stdout, "\nApply cancelled.")
		return &exitError{code: 1}
	}
	textsafe.Fprintln(g.stdout)
	return nil
}

// report prints the apply's account and returns the command's result;
// stopped is why the run was cut short (Ctrl-C, --timeout, a lost lock),
// nil when it was not; destroy is set for a destroy's plan.
func (g *globals) report(out io.Writer, rep *engine.Report, stopped error, destroy bool) error {
	if rep.OK() && stopped == nil {
		return render.ApplyComplete(out, rep, destroy, g.color(out))
	}
	_ = render.ApplyFailed(g.stderr, rep, stopped)
	return &exitError{code: 1}
}

// readPlanFile reads a saved plan checked with the plan key, which it
// returns (engine.LoadPlanFile); an unsigned one gets a warning.
func (g *globals) readPlanFile(path string) (*engine.PlanFile, engine.PlanKey, error) {
	pf, key, err := engine.LoadPlanFile(path, g.env)
	if err == nil && !pf.Signed() {
		textsafe.Fprintf(g.stderr, "Warning: %s %s.\n", path, engine.UnsignedWarning)
	}
	return pf, key, err
}
