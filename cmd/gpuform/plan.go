package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/providers/git"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

// Output formats of plan and show.
const (
	formatText     = "text"
	formatJSON     = "json"
	formatMarkdown = "markdown"
)

// planFlags are the flags plan shares with apply.
type planFlags struct {
	asJSON           bool
	format           string
	detailedExitCode bool
	adopt            bool
	out              string
	allowSensitive   bool
}

func newPlanCommand(g *globals) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change in the cluster",
		Long: "plan validates the configuration, reads the live cluster with one LIST per kind, and prints\n" +
			"the ordered change set. It never writes. With --detailed-exitcode it exits 0 when there is\n" +
			"nothing to do, 2 when there are changes, 1 on error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := f.outputFormat()
			if err != nil {
				return err
			}
			cfg, p, client, err := g.plan(cmd.Context(), f.adopt)
			if err != nil {
				return err
			}
			if err := renderPlan(g, g.stdout, p, format); err != nil {
				return err
			}
			if f.out != "" && p.Summary.Conflicts == 0 {
				if err := g.savePlan(f.out, cfg, p, client.Context(), f.allowSensitive); err != nil {
					return err
				}
				if format == formatText {
					fmt.Fprintf(g.stdout, "\nSaved the plan to %s. To apply exactly this plan, run:\n    gpuform apply %s\n", f.out, f.out)
				}
			}
			if p.Summary.Conflicts > 0 {
				fmt.Fprintf(g.stderr, "Error: %d %s in the way of the configuration; apply would fail. Rename them in the configuration, remove them, or plan with --adopt to take them over.\n", p.Summary.Conflicts, pluralWord(p.Summary.Conflicts, "object is", "objects are"))
				return &exitError{code: 1}
			}
			if f.detailedExitCode && p.HasChanges() {
				return &exitError{code: 2}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print the plan as JSON (same as --format json)")
	fl.StringVar(&f.format, "format", formatText, "output format: text, json or markdown")
	fl.BoolVar(&f.detailedExitCode, "detailed-exitcode", false, "exit 2 when the plan has changes, 0 when it has none")
	fl.BoolVar(&f.adopt, "adopt", false, "plan to take over existing objects that are in the way instead of failing")
	fl.StringVar(&f.out, "out", "", "save the plan to `FILE` for gpuform apply FILE")
	fl.BoolVar(&f.allowSensitive, "allow-sensitive-in-plan", false, "allow --out to store values of sensitive variables in the plan file")
	return cmd
}

func (f *planFlags) outputFormat() (string, error) {
	if f.asJSON {
		return formatJSON, nil
	}
	switch f.format {
	case formatText, formatJSON, formatMarkdown:
		return f.format, nil
	}
	return "", fmt.Errorf("unknown --format %q: use text, json or markdown", f.format)
}

// plan loads, validates and compiles the configuration, then refreshes and
// diffs against the cluster. Configuration errors are printed and end the
// run before any cluster call.
func (g *globals) plan(ctx context.Context, adopt bool) (*config.Config, *engine.Plan, cluster, error) {
	cfg, desired, err := g.compile()
	if err != nil {
		return nil, nil, nil, err
	}
	client, err := g.openCluster(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	live, err := client.Refresh(ctx, desired, engine.RefreshOptions{Adopt: adopt})
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := engine.Diff(desired, live, engine.DiffOptions{Adopt: adopt})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("plan stack %s: %w", desired.Stack, err)
	}
	if err := g.assess(ctx, client, cfg, live, p); err != nil {
		return nil, nil, nil, err
	}
	return cfg, p, client, nil
}

// savePlan writes p to path as a plan file.
func (g *globals) savePlan(path string, cfg *config.Config, p *engine.Plan, context string, allowSensitive bool) error {
	pf, err := engine.NewPlanFile(p, version, cfg.Hash, context, allowSensitive)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(g.path(path), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	if err := pf.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("save plan to %s: %w", path, err)
	}
	return f.Close()
}

// compile loads, validates and compiles; diagnostics are printed here.
func (g *globals) compile() (*config.Config, *engine.Desired, error) {
	cfg, diags := g.loadValid()
	g.writeDiags(cfg, diags)
	if diags.HasErrors() {
		return nil, nil, &exitError{code: 1}
	}
	desired, err := engine.Compile(cfg)
	if err != nil {
		return nil, nil, err
	}
	if commit, dirty, ok := git.Head(g.dir()); ok {
		if dirty {
			commit += "-dirty"
		}
		desired.StampCommit(commit)
	}
	return cfg, desired, nil
}

// kubeClient connects to the cluster the flags and the cluster block name
// (cfg may be nil): flags win over the block, which wins over KUBECONFIG and
// ~/.kube/config.
func (g *globals) kubeClient(cfg *config.Config) (*kubernetes.Client, error) {
	opts := kubernetes.Options{Kubeconfig: g.kubeconfig, Context: g.context}
	if cfg == nil {
		cfg = &config.Config{}
	}
	if opts.Kubeconfig == "" && cfg.Cluster != nil {
		opts.Kubeconfig = cfg.Cluster.Kubeconfig
		if opts.Kubeconfig != "" && !strings.HasPrefix(opts.Kubeconfig, "~") {
			opts.Kubeconfig = g.path(opts.Kubeconfig)
		}
	}
	if opts.Context == "" && cfg.Cluster != nil {
		opts.Context = cfg.Cluster.Context
	}
	opts.WrapTransport = g.wrapTransport
	return kubernetes.New(opts)
}

// renderPlan writes p in format.
func renderPlan(g *globals, w io.Writer, p *engine.Plan, format string) error {
	switch format {
	case formatJSON:
		return engine.RenderJSON(w, p)
	case formatMarkdown:
		return engine.RenderMarkdown(w, p)
	}
	return engine.RenderText(w, p, engine.TextOptions{Color: g.color(w)})
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// assess adds to a plan what the GPUs say: the capacity of every pool
// (problems are printed as diagnostics and end the run) and the pods that
// re-partitioning nodes would disrupt.
func (g *globals) assess(ctx context.Context, cl cluster, cfg *config.Config, live *engine.Live, p *engine.Plan) error {
	capacity, diags := engine.CheckCapacityFrom(cfg, live, mig.Default())
	g.writeDiags(cfg, diags)
	if diags.HasErrors() {
		return &exitError{code: 1}
	}
	p.Capacity = capacity
	if nodes := engine.RepartitionedNodes(p); len(nodes) > 0 {
		pods, err := cl.GPUPods(ctx, nodes)
		if err != nil {
			return err
		}
		for n, list := range pods {
			if len(list) > 0 {
				if p.Disruption == nil {
					p.Disruption = map[string][]string{}
				}
				p.Disruption[n] = list
			}
		}
		p.Warnings = append(p.Warnings, engine.DisruptionWarnings(p)...)
	}
	return nil
}
