package main

import (
	"errors"
	"fmt"
	"github.com/gpuform/gpuform/internal/cliflags"
	"github.com/hashicorp/hcl/v2"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
)

// Output formats of plan and show.
const (
	formatText     = "text"
	formatJSON     = "json"
	formatMarkdown = "markdown"
)

// planFlags are the flags plan shares with apply.
type planFlags struct {
	output           cliflags.Output
	detail           bool
	detailedExitCode bool
	adopt            bool
	out              string
	allowSensitive   bool
	// base, repo and ref are plan's git flags: --base REF previews a
	// change against the configuration at REF; --repo/--ref read the
	// configuration from git instead of the working directory.
	base, repo, ref string
	// outDir is where --base --format markdown writes its comments;
	// refName (--ref-name) the ref a saved plan records.
	outDir, refName string
	// destroy makes a destroy plan (--destroy); targets narrow the plan
	// (--target).
	destroy bool
	targets []string
}

func newPlanCommand(g *globals) *cobra.Command {
	var f planFlags
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "plan [DIR]",
		Short: "Show what apply would change in the cluster",
		Long: "plan validates the configuration, reads the live cluster with one LIST per kind, and prints\n" +
			"the ordered change set. It never writes. With --detailed-exitcode it exits 0 when there is\n" +
			"nothing to do, 2 when there are changes, 1 on error.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := f.outputFormat()
			if err != nil {
				return err
			}
			if err := g.useDirArg(args, f.repo); err != nil {
				return err
			}
			if f.outDir != "" && (f.base == "" || format != formatMarkdown) {
				return fmt.Errorf("--out-dir writes the comments of a pull request preview: use it with --base REF --format markdown")
			}
			if f.base != "" && (f.destroy || len(f.targets) > 0) {
				return fmt.Errorf("--base previews the whole configuration: it takes neither --destroy nor --target")
			}
			if members, err := g.explicitFleet(cmd); err != nil || members != nil {
				if err != nil {
					return err
				}
				if f.base != "" {
					return g.fleetPreview(cmd, members, &f, &ff, format)
				}
				return g.fleetPlanCommand(cmd, members, &f, &ff, format)
			}
			if f.base != "" {
				err := g.preview(cmd.Context(), &f, format)
				if members := g.fleetOf(err); members != nil {
					return g.fleetPreview(cmd, members, &f, &ff, format)
				}
				return err
			}
			st, done, err := g.newStack(f.repo, f.ref, connection{})
			if err != nil {
				return err
			}
			defer done()
			res, err := st.Plan(cmd.Context(), stack.PlanOptions{Adopt: f.adopt, Destroy: f.destroy, Targets: f.targets})
			if members := g.fleetOf(err); members != nil {
				return g.fleetPlanCommand(cmd, members, &f, &ff, format)
			}
			if err != nil {
				// A program asked for JSON gets JSON: validate --json's document.
				if ce := (*engine.ConfigError)(nil); format == formatJSON && errors.As(err, &ce) {
					_ = config.WriteJSON(g.stdout, ce.Diags)
				}
				return g.fail(err, "")
			}
			p := res.Plan
			g.warnTargeted(p)
			if err := renderPlan(g, g.stdout, p, res.Config.Files, format, f.detail); err != nil {
				return err
			}
			if f.out != "" && p.Summary.Conflicts == 0 {
				if err := g.savePlan(&f, res.Config, p, res.Context); err != nil {
					return err
				}
				if format == formatText {
					flag := ""
					if res.Refused {
						flag = " --allow-destroy"
					}
					if p.Destroy {
						flag = fmt.Sprintf(" --max-deletes %d", p.Summary.Destroy)
					}
					textsafe.Fprintf(g.stdout, "\nSaved the plan to %s. To apply exactly this plan, run:\n    gpuform apply%s %s\n", f.out, flag, f.out)
				}
			}
			return g.planExit(p, f.detailedExitCode)
		},
	}
	fl := cmd.Flags()
	cliflags.Add(fl, &f.output, true, formatText, formatJSON, formatMarkdown)
	fl.BoolVar(&f.detail, "detail", false, "print every field of created PrometheusRules (the text plan gives one line per rule group)")
	fl.BoolVar(&f.detailedExitCode, "detailed-exitcode", false, "exit 2 when the plan has changes, 0 when it has none")
	fl.BoolVar(&f.adopt, "adopt", false, "plan to take over existing objects that are in the way instead of failing")
	fl.StringVar(&f.out, "out", "", "save the plan to `FILE` for gpuform apply FILE")
	fl.BoolVar(&f.allowSensitive, "allow-sensitive-in-plan", false, "allow --out to store values of sensitive variables in the plan file")
	fl.StringVar(&f.base, "base", "", "preview a change: compare the configuration with the one at git `REF` (origin/main, a commit) and show both plans' capacity")
	fl.StringVar(&f.repo, "repo", "", "read the configuration from the git repository at `PATH` or URL (default: the working directory's)")
	fl.StringVar(&f.ref, "ref", "", "read the configuration at git `REF` instead of the working directory")
	fl.StringVar(&f.refName, "ref-name", "", "with --out, the git `REF` (branch) the plan is made from, which apply requires of a signed plan (default: $"+engine.RefEnv+", else --ref, else the checked-out branch)")
	fl.BoolVar(&f.destroy, "destroy", false, "plan to delete everything the stack owns (its inventory record), as gpuform destroy does")
	addTargetFlag(fl, &f.targets)
	addFleetFlags(fl, &ff)
	fl.StringVar(&f.outDir, "out-dir", "", "with --base and --format markdown, write the comments to `DIR`/comment-1.md, comment-2.md, ...")
	return cmd
}

func (f *planFlags) outputFormat() (string, error) { return f.output.Format() }

// savePlan writes p to --out as a plan file with its ref, signed when a plan key is set.
func (g *globals) savePlan(f *planFlags, cfg *config.Config, p *engine.Plan, context string) error {
	key, err := engine.LoadPlanKey(g.env)
	if err != nil {
		return err
	}
	pf, err := engine.NewPlanFile(p, version, cfg.Hash, context, f.allowSensitive)
	if err != nil {
		return err
	}
	pf.Ref = git.RefName(g.dir(), g.env, f.refName, f.ref)
	if err := files.WriteAtomic(g.path(f.out), 0o600, func(w io.Writer) error { return pf.WriteSigned(w, key) }); err != nil {
		return fmt.Errorf("save plan to %s: %w", f.out, err)
	}
	return nil
}

// renderPlan writes p in format. Text starts with where the configuration
// came from when it is in git; detail prints every field of created
// PrometheusRules.
func renderPlan(g *globals, w io.Writer, p *engine.Plan, files map[string]*hcl.File, format string, detail bool) error {
	switch format {
	case formatJSON:
		return render.JSON(w, p)
	case formatMarkdown:
		return render.Markdown(w, p)
	}
	if p.ConfigSource != nil && p.ConfigSource.Commit != "" {
		textsafe.Fprintf(w, "Configuration: %s\n\n", p.ConfigSource)
	}
	if p.Destroy && !p.HasChanges() {
		_, err := textsafe.Fprintf(w, "No objects to destroy: stack %s owns nothing in %s.\n", p.Stack, p.Source)
		return err
	}
	if p.Destroy {
		textsafe.Fprintf(w, "Destroy plan: the objects below, which stack %s owns, are deleted.\n\n", p.Stack)
	}
	return render.Text(w, p, render.TextOptions{Color: g.color(w), Files: files, Detail: detail})
}

// planExit is plan's exit status: 1 with objects in the way, 2 with
// changes and --detailed-exitcode.
func (g *globals) planExit(p *engine.Plan, detailed bool) error {
	if p.Summary.Conflicts > 0 {
		textsafe.Fprintf(g.stderr, "Error: %d %s in the way of the configuration; apply would fail. Rename them in the configuration, remove them, or plan with --adopt to take them over.\n", p.Summary.Conflicts, render.PluralWord(p.Summary.Conflicts, "object is", "objects are"))
		return &exitError{code: 1}
	}
	if detailed && p.HasChanges() {
		return &exitError{code: 2}
	}
	return nil
}
