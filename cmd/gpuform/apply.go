package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpuform/gpuform/engine"
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
}

func newApplyCommand(g *globals) *cobra.Command {
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "apply [PLANFILE]",
		Short: "Apply the configuration (or a saved plan) to the cluster",
		Long: "apply takes the stack's lock, plans, shows the plan and asks for confirmation (unless\n" +
			"--auto-approve), then applies the changes in dependency order with --parallelism changes in\n" +
			"flight. Given a plan file saved by plan --out, it applies exactly that plan without reading\n" +
			"the configuration, after checking that nothing it read has changed since.\n\n" +
			"A failed change skips its dependents and lets independent changes go on; apply then prints\n" +
			"what was applied, failed and skipped and exits 1. Running apply again converges.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return g.applySaved(cmd.Context(), args[0], &f)
			}
			return g.applyConfig(cmd.Context(), &f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.autoApprove, "auto-approve", false, "apply without asking for confirmation")
	fl.IntVar(&f.parallelism, "parallelism", engine.DefaultParallelism, "how many changes to apply at once")
	fl.DurationVar(&f.lockTimeout, "lock-timeout", 0, "how long to wait for the stack's lock (0: fail at once if held)")
	fl.DurationVar(&f.migTimeout, "mig-timeout", 15*time.Minute, "how long to wait for one node's MIG re-partitioning before failing its change")
	fl.BoolVar(&f.allowDestroy, "allow-destroy", false, "allow deleting protected tenants' namespaces and more than --max-deletes objects")
	fl.IntVar(&f.maxDeletes, "max-deletes", engine.DefaultMaxDeletes, "most objects one apply may delete without --allow-destroy")
	fl.BoolVar(&f.allowDisruption, "allow-disruption", false, "allow re-partitioning MIG on nodes with running GPU pods")
	fl.BoolVar(&f.adopt, "adopt", false, "take over existing objects in the way instead of failing")
	return cmd
}

// applyConfig plans under the lock, asks, and applies.
func (g *globals) applyConfig(ctx context.Context, f *applyFlags) error {
	cfg, desired, src, err := g.compileAt(ctx, "", "", nil)
	if err != nil {
		return err
	}
	client, err := g.openCluster(cfg)
	if err != nil {
		return err
	}
	ctx, release, err := g.lock(ctx, client, desired.Stack, f)
	if err != nil {
		return err
	}
	defer release()
	p, live, err := g.refreshDiff(ctx, client, desired, f.adopt)
	if err != nil {
		return err
	}
	p.ConfigSource = configSource(src)
	if err := g.assess(ctx, client, cfg, live, p); err != nil {
		return err
	}
	if err := renderPlan(g, g.stdout, p, cfg.Files, formatText); err != nil {
		return err
	}
	if err := g.checkApplicable(p, f); err != nil {
		return err
	}
	if !p.HasChanges() {
		return nil
	}
	if !f.autoApprove {
		if err := g.confirm(ctx); err != nil {
			return err
		}
	}
	return g.execute(ctx, client, p, f)
}

// applySaved applies a saved plan after checking that it is not stale.
func (g *globals) applySaved(ctx context.Context, path string, f *applyFlags) error {
	pf, err := readPlanFile(g.path(path))
	if err != nil {
		return err
	}
	client, err := g.openSavedCluster(pf.Context)
	if err != nil {
		return err
	}
	ctx, release, err := g.lock(ctx, client, pf.Stack, f)
	if err != nil {
		return err
	}
	defer release()
	p := pf.Plan()
	desired := &engine.Desired{Stack: pf.Stack, Kinds: engine.ManagedKinds()}
	for _, c := range p.Changes {
		if c.After != nil {
			desired.Objects = append(desired.Objects, &engine.Object{Address: c.Address, Object: c.After})
		}
	}
	live, err := client.Refresh(ctx, desired, engine.RefreshOptions{})
	if err != nil {
		return err
	}
	if live.Source != pf.Source {
		fmt.Fprintf(g.stderr, "Error: Saved plan is for another cluster\n\n%s was planned against %s, but this run reaches %s. Apply it where it was planned, or plan again here.\n", path, pf.Source, live.Source)
		return &exitError{code: 1}
	}
	if stale := pf.StaleObjects(live); len(stale) > 0 {
		fmt.Fprintf(g.stderr, "Error: Saved plan is stale\n\nThe cluster changed since %s was planned, so applying it could undo or miss those changes:\n  %s\n\nRun plan again and apply the new plan.\n", path, strings.Join(limit(stale, 20), "\n  "))
		return &exitError{code: 1}
	}
	if err := g.checkApplicable(p, f); err != nil {
		return err
	}
	if !p.HasChanges() {
		fmt.Fprintln(g.stdout, "No changes. The saved plan has nothing to apply.")
		return nil
	}
	return g.execute(ctx, client, p, f)
}

// checkApplicable refuses plans with conflicts or unsafe deletes.
func (g *globals) checkApplicable(p *engine.Plan, f *applyFlags) error {
	if p.Summary.Conflicts > 0 {
		fmt.Fprintf(g.stderr, "Error: %d %s in the way of the configuration and not managed by this stack; nothing was changed. Rename them in the configuration, remove them, or apply with --adopt to take them over.\n", p.Summary.Conflicts, pluralWord(p.Summary.Conflicts, "object is", "objects are"))
		return &exitError{code: 1}
	}
	if reasons := engine.Unsafe(p, engine.SafetyOptions{AllowDestroy: f.allowDestroy, MaxDeletes: f.maxDeletes, AllowDisruption: f.allowDisruption}); len(reasons) > 0 {
		for _, r := range reasons {
			fmt.Fprintf(g.stderr, "%s %s.\n", paint(g.color(g.stderr), "1;31", "Error: Unsafe plan:"), r)
		}
		return &exitError{code: 1}
	}
	return nil
}

func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// confirm asks for "yes" on a terminal; Ctrl-C cancels.
func (g *globals) confirm(ctx context.Context) error {
	in, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		fmt.Fprintln(g.stderr, "Error: apply needs confirmation, but standard input is not a terminal. Review the plan above and run apply with --auto-approve, or apply a saved plan file.")
		return &exitError{code: 1}
	}
	fmt.Fprint(g.stdout, "\nDo you want to perform these actions?\n  gpuform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter \"yes\" to apply: ")
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- line
	}()
	var line string
	select {
	case line = <-answer:
	case <-ctx.Done():
		fmt.Fprintln(g.stdout, "\n\nApply cancelled.")
		return &exitError{code: 1}
	}
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(g.stdout, "\nApply cancelled.")
		return &exitError{code: 1}
	}
	fmt.Fprintln(g.stdout)
	return nil
}

// lock takes the stack's lock. It returns a context that is cancelled when
// the lock is lost (so no new change starts), and the release, which works
// even when ctx was cancelled (Ctrl-C).
func (g *globals) lock(ctx context.Context, client cluster, stack string, f *applyFlags) (context.Context, func(), error) {
	held, err := client.Lock(ctx, stack, kubernetes.DefaultHolder(), f.lockTimeout)
	var heldErr *engine.LockHeldError
	if errors.As(err, &heldErr) {
		fmt.Fprintf(g.stderr, "Error: Error acquiring the state lock\n\n%s.\n", heldErr.Error())
		return nil, nil, &exitError{code: 1}
	}
	if err != nil {
		return nil, nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	go func() {
		select {
		case <-held.Lost:
			fmt.Fprintf(g.stderr, "Error: the state lock of stack %s was lost (lock ID %s): no new change starts; another run may hold it now.\n", stack, held.ID)
			cancel()
		case <-stop:
		}
	}()
	return lctx, func() {
		close(stop)
		cancel()
		rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer rcancel()
		if err := held.Release(rctx); err != nil {
			fmt.Fprintf(g.stderr, "Warning: %v; run gpuform force-unlock %s if the lock stays.\n", err, held.ID)
		}
	}, nil
}

// execute applies p, printing progress and the final account.
func (g *globals) execute(ctx context.Context, target engine.Target, p *engine.Plan, f *applyFlags) error {
	pr := &progress{w: g.stdout, tty: g.color(g.stdout)}
	rep := engine.Apply(ctx, p, target, engine.ApplyOptions{Parallelism: f.parallelism, Progress: pr.event, MIGTimeout: f.migTimeout})
	pr.clear()
	var stopped error
	if ctx.Err() != nil {
		stopped = context.Cause(ctx)
	}
	return g.report(rep, stopped)
}

// progress prints a line as each change starts and ends, the Terraform way,
// and on a terminal a done/total line.
type progress struct {
	w   io.Writer
	tty bool
}

// verbs are the progress words of an action: starting, done, and the verb.
func verbs(a engine.Action) [3]string {
	switch a {
	case engine.ActionCreate:
		return [3]string{"Creating", "Creation complete", "create"}
	case engine.ActionAdopt:
		return [3]string{"Adopting", "Adoption complete", "adopt"}
	case engine.ActionDelete:
		return [3]string{"Destroying", "Destruction complete", "destroy"}
	}
	return [3]string{"Modifying", "Modifications complete", "modify"}
}

func (p *progress) event(ev engine.Event) {
	p.clear()
	c := ev.Change
	v := verbs(c.Action)
	switch ev.Kind {
	case engine.EventStart:
		fmt.Fprintf(p.w, "%s: %s %s...\n", c.Address, v[0], c.Key)
	case engine.EventDone:
		r := ev.Result
		switch r.Outcome {
		case engine.OutcomeApplied:
			fmt.Fprintf(p.w, "%s: %s after %s [%s]\n", c.Address, v[1], seconds(r.Elapsed), c.Key)
		case engine.OutcomeFailed:
			fmt.Fprintf(p.w, "%s: Failed to %s %s after %s\n", c.Address, v[2], c.Key, seconds(r.Elapsed))
		case engine.OutcomeSkipped:
			fmt.Fprintf(p.w, "%s: Skipped %s: %v\n", c.Address, c.Key, r.Err)
		}
		if p.tty {
			fmt.Fprintf(p.w, "  [%d/%d done]", ev.Done, ev.Total)
		}
	}
}

// clear erases the terminal's progress line.
func (p *progress) clear() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// report prints the apply's account and returns the command's result;
// stopped is why the run was cut short (Ctrl-C, --timeout, a lost lock),
// nil when it was not.
func (g *globals) report(rep *engine.Report, stopped error) error {
	interrupted := stopped != nil
	var added, changed, destroyed int
	for _, r := range rep.Results {
		if r.Outcome != engine.OutcomeApplied {
			continue
		}
		switch r.Change.Action {
		case engine.ActionCreate:
			added++
		case engine.ActionUpdate, engine.ActionAdopt:
			changed++
		case engine.ActionDelete:
			destroyed++
		}
	}
	if rep.OK() && !interrupted {
		fmt.Fprintf(g.stdout, "\n%s\n", paint(g.color(g.stdout), "1;32", fmt.Sprintf("Apply complete! Resources: %d added, %d changed, %d destroyed.", added, changed, destroyed)))
		return nil
	}
	applied, failed, skipped := rep.Count(engine.OutcomeApplied), rep.Count(engine.OutcomeFailed), rep.Count(engine.OutcomeSkipped)
	what := "Apply failed"
	var timedOut *engine.RunTimeoutError
	switch {
	case errors.As(stopped, &timedOut):
		what = fmt.Sprintf("Apply stopped: %v", timedOut)
	case interrupted:
		what = "Apply interrupted"
	}
	fmt.Fprintf(g.stderr, "\nError: %s: %d applied (%d added, %d changed, %d destroyed), %d failed, %d skipped.\n\n", what, applied, added, changed, destroyed, failed, skipped)
	tw := tabwriter.NewWriter(g.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RESULT\tOBJECT\tADDRESS\tDETAIL")
	for _, o := range []engine.Outcome{engine.OutcomeFailed, engine.OutcomeSkipped} {
		for _, r := range rep.Results {
			if r.Outcome == o {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", o, r.Change.Key, r.Change.Address, oneLine(r.Err))
			}
		}
	}
	fmt.Fprintf(tw, "  applied\t%d objects\t\t\n", applied)
	_ = tw.Flush()
	fmt.Fprintln(g.stderr, "\nWhat was applied stays applied. Fix the cause and run apply again: it converges.")
	return &exitError{code: 1}
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
}

func readPlanFile(path string) (*engine.PlanFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open plan file: %w", err)
	}
	defer f.Close()
	pf, err := engine.ReadPlanFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pf, nil
}
