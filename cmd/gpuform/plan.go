package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
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
	// base, repo and ref are plan's git flags: --base REF previews a
	// change against the configuration at REF; --repo/--ref read the
	// configuration from git instead of the working directory.
	base, repo, ref string
	// outDir is where --base --format markdown writes its comments.
	outDir string
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
			if f.outDir != "" && (f.base == "" || format != formatMarkdown) {
				return fmt.Errorf("--out-dir writes the comments of a pull request preview: use it with --base REF --format markdown")
			}
			if f.base != "" {
				return g.preview(cmd.Context(), &f, format)
			}
			cfg, p, client, err := g.planAt(cmd.Context(), f.repo, f.ref, f.adopt)
			if err != nil {
				return err
			}
			if err := renderPlan(g, g.stdout, p, cfg.Files, format); err != nil {
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
	fl.StringVar(&f.base, "base", "", "preview a change: compare the configuration with the one at git `REF` (origin/main, a commit) and show both plans' capacity")
	fl.StringVar(&f.repo, "repo", "", "read the configuration from the git repository at `PATH` or URL (default: the working directory's)")
	fl.StringVar(&f.ref, "ref", "", "read the configuration at git `REF` instead of the working directory")
	fl.StringVar(&f.outDir, "out-dir", "", "with --base and --format markdown, write the comments to `DIR`/comment-1.md, comment-2.md, ...")
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
	return g.planAt(ctx, "", "", adopt)
}

// planAt is plan with the configuration from git (repo and ref as
// loadValidAt takes them); the plan records where it came from.
func (g *globals) planAt(ctx context.Context, repo, ref string, adopt bool) (*config.Config, *engine.Plan, cluster, error) {
	var client cluster
	cfg, desired, src, err := g.compileAt(ctx, repo, ref, func(cfg *config.Config) error {
		// The configuration is valid: the stack's LISTs can go out while
		// it compiles.
		var err error
		if client, err = g.openCluster(cfg); err == nil {
			if pf, ok := client.(prefetcher); ok {
				pf.Prefetch(ctx, cfg.Settings.Stack)
			}
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	p, live, err := g.refreshDiff(ctx, client, desired, adopt)
	if err != nil {
		return nil, nil, nil, err
	}
	p.ConfigSource = configSource(src)
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

// prefetcher starts reading a stack's objects before Refresh asks for
// them (the Kubernetes provider's Prefetch).
type prefetcher interface {
	Prefetch(ctx context.Context, stack string)
}

// compileAt loads (as loadValidAt), validates and compiles, stamping the
// desired objects with the commit; diagnostics are printed here. valid,
// when not nil, runs once the configuration is valid, before it compiles.
func (g *globals) compileAt(ctx context.Context, repo, ref string, valid func(*config.Config) error) (*config.Config, *engine.Desired, source, error) {
	start := time.Now()
	cfg, src, diags := g.loadValidAt(ctx, repo, ref)
	g.writeDiags(cfg, diags)
	if diags.HasErrors() {
		return nil, nil, src, &exitError{code: 1}
	}
	start = g.timed("load", start)
	if valid != nil {
		if err := valid(cfg); err != nil {
			return nil, nil, src, err
		}
	}
	desired, err := compile.Compile(cfg)
	if err != nil {
		return nil, nil, src, err
	}
	g.timed("compile", start)
	desired.StampCommit(src.Stamp())
	// Free the syntax tree before the cluster's objects arrive.
	cfg.DropSyntax()
	return cfg, desired, src, nil
}

// compile loads, validates and compiles; diagnostics are printed here.
func (g *globals) compile() (*config.Config, *engine.Desired, error) {
	cfg, desired, _, err := g.compileAt(context.Background(), "", "", nil)
	return cfg, desired, err
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
	opts.WrapTransport = g.kubeTransport()
	return kubernetes.New(opts)
}

// renderPlan writes p in format. Text starts with where the configuration
// came from when it is in git, and shows the source lines of warnings from
// files (nil for a saved plan).
func renderPlan(g *globals, w io.Writer, p *engine.Plan, files map[string]*hcl.File, format string) error {
	switch format {
	case formatJSON:
		return render.JSON(w, p)
	case formatMarkdown:
		return render.Markdown(w, p)
	}
	if p.ConfigSource != nil && p.ConfigSource.Commit != "" {
		fmt.Fprintf(w, "Configuration: %s\n\n", p.ConfigSource)
	}
	return render.Text(w, p, render.TextOptions{Color: g.color(w), Files: files})
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// assess adds to a plan what the GPUs say: the capacity of every pool
// (problems are printed as diagnostics and end the run) and the pods that
// re-partitioning nodes would disrupt; the plan's warnings get the source
// range of the block they are about.
func (g *globals) assess(ctx context.Context, cl cluster, cfg *config.Config, live *engine.Live, p *engine.Plan) error {
	report, diags := capacity.CheckFrom(cfg, live.Nodes, maps.Values(live.Objects), mig.Default())
	g.writeDiags(cfg, diags)
	if diags.HasErrors() {
		return &exitError{code: 1}
	}
	p.Capacity = report
	// Inventory annotations that were not trusted (malformed, or lying
	// about the GPUs) are a warning, not a silent fallback.
	p.Warnings = append(p.Warnings, capacity.InventoryWarnings(cfg, live.Nodes, mig.Default())...)
	if err := g.disruption(ctx, cl, p); err != nil {
		return err
	}
	engine.LocateWarnings(p.Warnings, cfg)
	return nil
}

// disruption adds to a plan the pods that re-partitioning nodes would
// disrupt, with a warning per node.
func (g *globals) disruption(ctx context.Context, cl cluster, p *engine.Plan) error {
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

// configSource is a source as plans record it: nil outside git.
func configSource(s source) *engine.ConfigSource {
	if s.Commit == "" {
		return nil
	}
	return &s
}

// preview is plan --base: the configuration (working directory, or
// --repo/--ref) against the one at --base in the same repository — the
// semantic config diff, head's plan against the cluster, and the capacity
// of both on the same live nodes. Capacity problems of head do not stop
// the preview (a pull request needs to see them) but end it with exit 1,
// as plan does.
func (g *globals) preview(ctx context.Context, f *planFlags, format string) error {
	head, desired, src, err := g.compileAt(ctx, f.repo, f.ref, nil)
	if err != nil {
		return err
	}
	pv := &engine.Preview{}
	base, baseSrc, diags := g.loadValidAt(ctx, f.repo, f.base)
	pv.Base = &engine.ConfigSource{Repo: baseSrc.Repo, Ref: f.base, Commit: baseSrc.Commit}
	if diags.HasErrors() {
		fmt.Fprintf(g.stderr, "Warning: the configuration at base %s cannot be read; the preview shows every block as added.\n\n", f.base)
		g.writeDiags(base, onlyErrors(diags))
		pv.BaseError = firstError(diags)
		base = nil
	}
	client, err := g.openCluster(head)
	if err != nil {
		return err
	}
	live, err := client.Refresh(ctx, desired, engine.RefreshOptions{Adopt: f.adopt})
	if err != nil {
		return err
	}
	p, err := engine.Diff(desired, live, engine.DiffOptions{Adopt: f.adopt})
	if err != nil {
		return fmt.Errorf("plan stack %s: %w", desired.Stack, err)
	}
	p.ConfigSource = configSource(src)
	pv.Plan = p
	pv.ConfigChanges = engine.ConfigDiff(base, head)

	report, cdiags := capacity.CheckFrom(head, live.Nodes, maps.Values(live.Objects), mig.Default())
	p.Capacity = report
	g.writeDiags(head, cdiags)
	for _, d := range cdiags {
		if d.Severity == hcl.DiagError {
			pv.CapacityProblems = append(pv.CapacityProblems, strings.TrimSuffix(d.Detail, "."))
		}
	}
	if base != nil {
		if before, _ := capacity.CheckFrom(base, live.Nodes, maps.Values(live.Objects), mig.Default()); before != nil {
			pv.CapacityBefore = before.Rows
		}
	}
	if err := g.disruption(ctx, client, p); err != nil {
		return err
	}
	engine.LocateWarnings(p.Warnings, head)

	switch format {
	case formatJSON:
		err = render.PreviewJSON(g.stdout, pv)
	case formatMarkdown:
		err = g.writeComments(render.PreviewMarkdown(pv), p.Stack, f.outDir)
	default:
		err = render.PreviewText(g.stdout, pv, render.TextOptions{Color: g.color(g.stdout), Files: head.Files})
	}
	if err != nil {
		return err
	}
	if f.out != "" && p.Summary.Conflicts == 0 && len(pv.CapacityProblems) == 0 {
		if err := g.savePlan(f.out, head, p, client.Context(), f.allowSensitive); err != nil {
			return err
		}
	}
	switch {
	case len(pv.CapacityProblems) > 0:
		fmt.Fprintf(g.stderr, "Error: the configuration does not fit the GPUs (see above); apply would refuse it.\n")
		return &exitError{code: 1}
	case p.Summary.Conflicts > 0:
		fmt.Fprintf(g.stderr, "Error: %d %s in the way of the configuration; apply would fail. Rename them in the configuration, remove them, or plan with --adopt to take them over.\n", p.Summary.Conflicts, pluralWord(p.Summary.Conflicts, "object is", "objects are"))
		return &exitError{code: 1}
	case f.detailedExitCode && p.HasChanges():
		return &exitError{code: 2}
	}
	return nil
}

// firstError is the first error of diags in one line.
func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + strings.TrimSuffix(d.Detail, ".")
		}
		if d.Subject != nil {
			msg += " (" + d.Subject.String() + ")"
		}
		return strings.ReplaceAll(msg, "\n", " ")
	}
	return ""
}

// writeComments splits a preview's Markdown into pull request comments:
// into dir/comment-N.md, or to stdout each after a line
// "<!-- gpuform comment N/M -->". Stale comment files of an earlier, longer
// run are removed.
func (g *globals) writeComments(md, stack, dir string) error {
	parts := render.SplitComments(md, stack, render.MaxCommentSize)
	if dir == "" {
		w := bufio.NewWriter(g.stdout)
		for i, part := range parts {
			if i > 0 {
				w.WriteString("\n")
			}
			fmt.Fprintf(w, "<!-- gpuform comment %d/%d -->\n", i+1, len(parts))
			w.WriteString(part.String())
		}
		return w.Flush()
	}
	dir = g.path(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write comments: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "comment-*.md"))
	for _, o := range old {
		_ = os.Remove(o)
	}
	for i, part := range parts {
		name := filepath.Join(dir, fmt.Sprintf("comment-%d.md", i+1))
		if err := os.WriteFile(name, []byte(part.String()), 0o644); err != nil {
			return fmt.Errorf("write comments: %w", err)
		}
	}
	fmt.Fprintf(g.stdout, "Wrote %d %s to %s.\n", len(parts), pluralWord(len(parts), "comment", "comments"), dir)
	return nil
}

// onlyErrors drops warnings from diags.
func onlyErrors(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// refreshDiff reads the live state of desired's stack and diffs it: the
// plan, without the GPU assessment (see assess).
func (g *globals) refreshDiff(ctx context.Context, client cluster, desired *engine.Desired, adopt bool) (*engine.Plan, *engine.Live, error) {
	start := time.Now()
	live, err := client.Refresh(ctx, desired, engine.RefreshOptions{Adopt: adopt})
	if err != nil {
		return nil, nil, err
	}
	start = g.timed("refresh", start)
	p, err := engine.Diff(desired, live, engine.DiffOptions{Adopt: adopt})
	if err != nil {
		return nil, nil, fmt.Errorf("plan stack %s: %w", desired.Stack, err)
	}
	g.timed("diff", start)
	return p, live, nil
}
