package main

import (
	"context"
	"fmt"
	"github.com/gpuform/gpuform/internal/cliflags"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
)

type driftFlags struct {
	repo, ref   string
	output      cliflags.Output
	metricsFile string
	fix         bool
	apply       applyFlags
}

// fixOnlyFlags are the apply flags that mean something only with --fix.
var fixOnlyFlags = []string{"auto-approve", "parallelism", "lock-timeout", "allow-destroy", "max-deletes", "allow-disruption"}

func newDriftCommand(g *globals) *cobra.Command {
	var f driftFlags
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "drift [DIR]",
		Short: "Report how the cluster differs from the configuration at a git ref",
		Long: "drift reads the configuration at a git ref (default: the working directory), plans it against\n" +
			"the live cluster and classifies every difference: live-edit (a managed object changed by hand),\n" +
			"unapplied (the configuration at the ref is newer than what was applied), missing (an applied\n" +
			"object deleted from the cluster) and hardware (a pool's nodes with other GPUs, another driver,\n" +
			"or a MIG state or layout other than the pool's). It never writes unless --fix is given.\n\n" +
			"Exit status: 0 in sync, 2 drift found, 1 error. --fix applies the configuration at the ref\n" +
			"under the stack's lock, as apply --auto-approve would, and exits 0 if the cluster is in sync\n" +
			"afterwards. See docs/drift.md.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.useDirArg(args, f.repo); err != nil {
				return err
			}
			if !f.fix {
				for _, name := range fixOnlyFlags {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s applies to drift --fix only: without --fix, drift only reports and never writes", name)
					}
				}
			}
			format, err := f.output.Format()
			if err != nil {
				return err
			}
			if members, err := g.explicitFleet(cmd); err != nil || members != nil {
				if err != nil {
					return err
				}
				return g.fleetDriftCommand(cmd, members, &f, &ff, format)
			}
			err = g.drift(cmd.Context(), &f)
			if members := g.fleetOf(err); members != nil {
				return g.fleetDriftCommand(cmd, members, &f, &ff, format)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", "", "read the configuration from the git repository at `PATH` or URL (default: the working directory's)")
	fl.StringVar(&f.ref, "ref", "", "compare with the configuration at git `REF` (branch, tag, commit; default: the working directory, or HEAD of --repo)")
	cliflags.Add(fl, &f.output, true, formatText, formatJSON, formatMarkdown)
	fl.StringVar(&f.metricsFile, "metrics-file", "", "also write Prometheus text-format gauges to `FILE`, atomically (node-exporter's textfile collector)")
	fl.BoolVar(&f.fix, "fix", false, "apply the configuration at the ref to remove the drift (takes the lock; implies --auto-approve)")
	fl.Bool("auto-approve", false, "with --fix: accepted as apply's habit and ignored, since --fix already applies without asking")
	fl.IntVar(&f.apply.parallelism, "parallelism", engine.DefaultParallelism, "with --fix: how many changes to apply at once")
	fl.DurationVar(&f.apply.lockTimeout, "lock-timeout", 0, "with --fix: how long to wait for the stack's lock (0: fail at once if held)")
	fl.BoolVar(&f.apply.allowDestroy, "allow-destroy", false, "with --fix: allow deleting protected tenants' namespaces and more than --max-deletes objects")
	fl.IntVar(&f.apply.maxDeletes, "max-deletes", engine.DefaultMaxDeletes, "with --fix: most objects one fix may delete without --allow-destroy")
	addFleetFlags(fl, &ff)
	fl.BoolVar(&f.apply.allowDisruption, "allow-disruption", false, "with --fix: allow re-partitioning MIG, or moving a pool between the device plugin and DRA, on nodes with running GPU pods")
	return cmd
}

// drift checks, reports, optionally fixes, and sets the exit status.
func (g *globals) drift(ctx context.Context, f *driftFlags) error {
	format, err := f.output.Format()
	if err != nil {
		return err
	}
	st, done, err := g.newStack(f.repo, f.ref, connection{inCluster: true})
	if err != nil {
		return err
	}
	defer done()
	rep, err := st.Drift(ctx)
	if err != nil {
		return g.fail(err, "")
	}
	var after *drift.Report
	if f.fix && !rep.InSync() {
		if format == formatText {
			if err := render.DriftText(g.stdout, rep, render.TextOptions{Color: g.color(g.stdout)}); err != nil {
				return err
			}
		}
		// Apply's progress goes with the text report; it would corrupt JSON
		// and Markdown on standard output, so it goes to standard error then.
		progress := g.stdout
		if format != formatText {
			progress = g.stderr
		}
		if after, err = g.fixDrift(ctx, st, rep, &f.apply, progress); err != nil {
			return err
		}
		if format == formatText {
			textsafe.Fprintf(g.stdout, "\nAfter the fix:\n")
		}
	}
	final := rep
	if after != nil {
		final = after
	}
	switch {
	case format == formatJSON:
		err = render.DriftJSON(g.stdout, rep, after)
	case format == formatMarkdown:
		err = render.DriftMarkdown(g.stdout, rep, after)
	default:
		err = render.DriftText(g.stdout, final, render.TextOptions{Color: g.color(g.stdout)})
	}
	if err != nil {
		return err
	}
	if f.metricsFile != "" {
		if err := files.WriteAtomic(g.path(f.metricsFile), 0o644, func(w io.Writer) error { return render.DriftMetrics(w, final) }); err != nil {
			return fmt.Errorf("write metrics file: %w", err)
		}
	}
	if !final.InSync() {
		return &exitError{code: 2}
	}
	return nil
}

// fixDrift applies the configuration as apply --auto-approve does, with
// its progress on progress, and returns the drift left; drift that only a
// person can fix (hardware) is left as it is.
func (g *globals) fixDrift(ctx context.Context, st *stack.Stack, rep *drift.Report, f *applyFlags, progress io.Writer) (*drift.Report, error) {
	if !rep.Fixable() {
		textsafe.Fprintf(progress, "\nNothing for --fix to apply: what drifted is hardware, which needs a person.\n")
		return rep, nil
	}
	opts, pr := g.applyOptions(f, progress)
	opts.Approve = func(_ context.Context, p *engine.Plan) error {
		textsafe.Fprintf(progress, "\nFixing the drift: applying the configuration at %s to stack %s.\n\n", rep.ConfigSource, p.Stack)
		return nil
	}
	fix, err := st.Fix(ctx, opts)
	var res *stack.ApplyResult
	if fix != nil {
		res = fix.Apply
	}
	if err := g.applied(res, err, pr, ""); err != nil {
		return nil, err
	}
	return fix.After, nil
}
