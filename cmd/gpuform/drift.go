package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/providers/git"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

type driftFlags struct {
	repo, ref   string
	asJSON      bool
	format      string
	metricsFile string
	fix         bool
	apply       applyFlags
}

// fixOnlyFlags are the apply flags that mean something only with --fix.
var fixOnlyFlags = []string{"parallelism", "lock-timeout", "allow-destroy", "max-deletes", "allow-disruption"}

func newDriftCommand(g *globals) *cobra.Command {
	var f driftFlags
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Report how the cluster differs from the configuration at a git ref",
		Long: "drift reads the configuration at a git ref (default: the working directory), plans it against\n" +
			"the live cluster and classifies every difference: live-edit (a managed object changed by hand),\n" +
			"unapplied (the configuration at the ref is newer than what was applied), missing (an applied\n" +
			"object deleted from the cluster) and hardware (a pool's nodes with other GPUs, another driver,\n" +
			"or a MIG state or layout other than the pool's). It never writes unless --fix is given.\n\n" +
			"Exit status: 0 in sync, 2 drift found, 1 error. --fix applies the configuration at the ref\n" +
			"under the stack's lock, as apply --auto-approve would, and exits 0 if the cluster is in sync\n" +
			"afterwards. See docs/drift.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.fix {
				for _, name := range fixOnlyFlags {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s applies to drift --fix only", name)
					}
				}
			}
			return g.drift(cmd.Context(), &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", "", "read the configuration from the git repository at `PATH` or URL (default: the working directory's)")
	fl.StringVar(&f.ref, "ref", "", "compare with the configuration at git `REF` (branch, tag, commit; default: the working directory, or HEAD of --repo)")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON (same as --format json)")
	fl.StringVar(&f.format, "format", formatText, "output format: text, json or markdown")
	fl.StringVar(&f.metricsFile, "metrics-file", "", "also write Prometheus text-format gauges to `FILE`, atomically (node-exporter's textfile collector)")
	fl.BoolVar(&f.fix, "fix", false, "apply the configuration at the ref to remove the drift (takes the lock; implies --auto-approve)")
	fl.IntVar(&f.apply.parallelism, "parallelism", engine.DefaultParallelism, "with --fix: how many changes to apply at once")
	fl.DurationVar(&f.apply.lockTimeout, "lock-timeout", 0, "with --fix: how long to wait for the stack's lock (0: fail at once if held)")
	fl.BoolVar(&f.apply.allowDestroy, "allow-destroy", false, "with --fix: allow deleting protected tenants' namespaces and more than --max-deletes objects")
	fl.IntVar(&f.apply.maxDeletes, "max-deletes", engine.DefaultMaxDeletes, "with --fix: most objects one fix may delete without --allow-destroy")
	fl.BoolVar(&f.apply.allowDisruption, "allow-disruption", false, "with --fix: allow re-partitioning MIG on nodes with running GPU pods")
	return cmd
}

// drift checks, reports, optionally fixes, and sets the exit status.
func (g *globals) drift(ctx context.Context, f *driftFlags) error {
	format, err := (&planFlags{asJSON: f.asJSON, format: f.format}).outputFormat()
	if err != nil {
		return err
	}
	in, err := g.driftInputs(ctx, f.repo, f.ref)
	if err != nil {
		return err
	}
	defer in.close()
	client, err := g.driftCluster(in.cfg)
	if err != nil {
		return err
	}
	rep, err := g.checkDrift(ctx, client, in)
	if err != nil {
		return err
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
		if rep.Fixable() {
			after, err = g.fixDrift(ctx, client, in, f, progress)
			if err != nil {
				return err
			}
		} else {
			fmt.Fprintf(progress, "\nNothing for --fix to apply: what drifted is hardware, which needs a person.\n")
			after = rep
		}
		if format == formatText {
			fmt.Fprintf(g.stdout, "\nAfter the fix:\n")
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
		if err := writeFileAtomic(g.path(f.metricsFile), func(w io.Writer) error { return render.DriftMetrics(w, final) }); err != nil {
			return fmt.Errorf("write metrics file: %w", err)
		}
	}
	if !final.InSync() {
		return &exitError{code: 2}
	}
	return nil
}

// checkDrift reads the cluster, plans and classifies.
func (g *globals) checkDrift(ctx context.Context, client cluster, in *driftInputs) (*drift.Report, error) {
	live, err := client.Refresh(ctx, in.desired, engine.RefreshOptions{})
	if err != nil {
		return nil, err
	}
	checked := time.Now()
	p, err := engine.Diff(in.desired, live, engine.DiffOptions{})
	if err != nil {
		return nil, fmt.Errorf("plan stack %s: %w", in.desired.Stack, err)
	}
	applied, warnings := in.appliedConfigs(live)
	rep := drift.Classify(p, in.desired, live, in.commit, drift.Options{Applied: applied, Config: in.cfg, Catalog: mig.Default()})
	rep.Warnings = append(rep.Warnings, warnings...)
	rep.CheckedAt = checked
	src := in.src
	rep.ConfigSource = &src
	return rep, nil
}

// fixDrift applies the configuration at the ref as apply --auto-approve
// does (lock, plan under the lock, capacity and safety checks, ordered
// apply) and checks again, under the lock, what is left.
func (g *globals) fixDrift(ctx context.Context, client cluster, in *driftInputs, f *driftFlags, progress io.Writer) (*drift.Report, error) {
	ctx, release, err := g.lock(ctx, client, in.desired.Stack, &f.apply)
	if err != nil {
		return nil, err
	}
	defer release()
	p, live, err := g.refreshDiff(ctx, client, in.desired, false)
	if err != nil {
		return nil, err
	}
	if p.HasChanges() || p.Summary.Conflicts > 0 {
		if err := g.assess(ctx, client, in.cfg, live, p); err != nil {
			return nil, err
		}
		if err := g.checkApplicable(p, &f.apply); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "\nFixing the drift: applying the configuration at %s to stack %s.\n\n", &in.src, in.desired.Stack)
		gp := *g
		gp.stdout = progress
		if err := gp.execute(ctx, client, p, &f.apply); err != nil {
			return nil, err
		}
	}
	return g.checkDrift(ctx, client, in)
}

// driftInputs is the configuration at the ref, compiled and stamped, and
// the repository to read the configurations the cluster was applied from.
type driftInputs struct {
	cfg     *config.Config
	src     source
	desired *engine.Desired
	// commit is the stamp the ref's objects carry: src.Commit, with
	// "-dirty" for a dirty work tree.
	commit string
	// refTime is when the ref's commit was made (now for a dirty tree).
	refTime time.Time
	// repo and dir locate the configuration in git (repo nil outside git).
	repo  *git.Repo
	dir   string
	opts  config.Options
	close func()
	// cache holds the configurations loaded at applied commits.
	cache map[string]appliedEntry
}

type appliedEntry struct {
	when    time.Time
	desired *engine.Desired
	err     error
}

// maxAppliedCommits bounds the configurations drift loads at the commits
// stamped on live objects.
const maxAppliedCommits = 32

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// driftInputs loads and compiles the configuration drift compares with,
// printing diagnostics; an invalid configuration ends the run with exit 1
// before any cluster call.
func (g *globals) driftInputs(ctx context.Context, repo, ref string) (*driftInputs, error) {
	in := &driftInputs{close: func() {}, cache: map[string]appliedEntry{}}
	fail := func(cfg *config.Config, diags hcl.Diagnostics) (*driftInputs, error) {
		g.writeDiags(cfg, diags)
		in.close()
		return nil, &exitError{code: 1}
	}
	opts, diags := g.loadOptions()
	if diags.HasErrors() {
		return fail(nil, diags)
	}
	in.opts = opts
	if repo == "" && ref == "" {
		cfg, src, diags := g.loadValidAt(ctx, "", "")
		if diags.HasErrors() {
			return fail(cfg, diags)
		}
		g.writeDiags(cfg, diags)
		in.cfg, in.src = cfg, src
		if src.Commit != "" {
			if r, err := git.Open(g.dir()); err == nil {
				if dir, err := r.RelDir(g.dir()); err == nil {
					in.repo, in.dir = r, dir
					if rev, err := r.At(src.Commit, dir); err == nil {
						in.refTime = commitTime(rev.FS)
					}
				}
			}
		}
		if src.Dirty {
			in.refTime = time.Now()
		}
	} else {
		if ref == "" {
			ref = "HEAD"
		}
		gitFail := func(err error) (*driftInputs, error) {
			return fail(nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the configuration from git", Detail: err.Error() + "."}})
		}
		r, dir, err := g.openRepo(ctx, repo)
		if err != nil {
			return gitFail(err)
		}
		in.repo, in.dir, in.close = r, dir, r.Close
		rev, err := r.At(ref, dir)
		if err != nil {
			return gitFail(err)
		}
		cfg, diags := config.LoadFS(rev.FS, opts)
		if !diags.HasErrors() {
			diags = append(diags, compile.Validate(cfg, mig.Default())...)
		}
		if diags.HasErrors() {
			return fail(cfg, diags)
		}
		g.writeDiags(cfg, diags)
		in.cfg = cfg
		in.src = source{Repo: repo, Ref: ref, Commit: rev.Commit}
		in.refTime = commitTime(rev.FS)
	}
	desired, err := compile.Compile(in.cfg)
	if err != nil {
		in.close()
		return nil, err
	}
	in.commit = in.src.Stamp()
	desired.StampCommit(in.commit)
	in.desired = desired
	return in, nil
}

// commitTime is the commit time of a revision's files.
func commitTime(fsys fs.FS) time.Time {
	if st, err := fs.Stat(fsys, "."); err == nil {
		return st.ModTime()
	}
	return time.Time{}
}

// appliedConfigs compiles the configuration at every commit stamped on the
// live objects (at most maxAppliedCommits), newest first, with the ref
// among them, and says which stamps could not be read.
func (in *driftInputs) appliedConfigs(live *engine.Live) ([]drift.AppliedConfig, []string) {
	objects := map[string]int{}
	for _, u := range live.Objects {
		if s := u.GetAnnotations()[engine.AnnotCommit]; s != "" && s != in.commit {
			objects[s]++
		}
	}
	stamps := make([]string, 0, len(objects))
	for s := range objects {
		stamps = append(stamps, s)
	}
	// The most used stamps first, so the cap drops the rarest.
	sort.Slice(stamps, func(i, j int) bool {
		if objects[stamps[i]] != objects[stamps[j]] {
			return objects[stamps[i]] > objects[stamps[j]]
		}
		return stamps[i] < stamps[j]
	})
	type entry struct {
		commit string
		when   time.Time
		d      *engine.Desired
	}
	refTime := in.refTime
	if refTime.IsZero() {
		refTime = time.Now() // unknown: take the ref as the newest
	}
	var entries []entry
	if in.commit != "" {
		entries = append(entries, entry{commit: in.commit, when: refTime, d: in.desired})
	}
	var unread []string
	unreadObjects := 0
	for i, s := range stamps {
		e, ok := in.cache[s]
		if !ok {
			e = in.load(s, i)
			in.cache[s] = e
		}
		if e.desired == nil {
			unread = append(unread, drift.ShortCommit(s))
			unreadObjects += objects[s]
		}
		entries = append(entries, entry{commit: s, when: e.when, d: e.desired})
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i].when, entries[j].when
		if a.IsZero() != b.IsZero() {
			return !a.IsZero()
		}
		return a.After(b)
	})
	out := make([]drift.AppliedConfig, len(entries))
	for i, e := range entries {
		out[i] = drift.AppliedConfig{Commit: e.commit, Desired: e.d}
	}
	var warnings []string
	if len(unread) > 0 {
		sort.Strings(unread)
		warnings = append(warnings, fmt.Sprintf("%d %s applied from %s, whose configuration drift could not read (not a commit of this repository, a dirty work tree, or more than %d commits): for those, drift compared the commit stamps only",
			unreadObjects, pluralWord(unreadObjects, "object was", "objects were"), strings.Join(limit(unread, 5), ", "), maxAppliedCommits))
	}
	return out, warnings
}

// load compiles the configuration at commit s (the i-th stamp by use).
func (in *driftInputs) load(s string, i int) appliedEntry {
	switch {
	case in.repo == nil:
		return appliedEntry{err: fmt.Errorf("not in git")}
	case !commitRE.MatchString(s):
		return appliedEntry{err: fmt.Errorf("%s is not a commit", s)}
	case i >= maxAppliedCommits:
		return appliedEntry{err: fmt.Errorf("over %d commits", maxAppliedCommits)}
	}
	rev, err := in.repo.At(s, in.dir)
	if err != nil {
		return appliedEntry{err: err}
	}
	e := appliedEntry{when: commitTime(rev.FS)}
	cfg, diags := config.LoadFS(rev.FS, in.opts)
	if !diags.HasErrors() {
		diags = compile.Validate(cfg, mig.Default())
	}
	if diags.HasErrors() {
		e.err = diags
		return e
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		e.err = err
		return e
	}
	d.StampCommit(s)
	e.desired = d
	return e
}

// driftCluster is the cluster drift reads: inside a pod with no
// --kubeconfig, --context or simulated cluster, the pod's service account
// (the CronJob of examples/deploy/drift-cronjob.yaml); else as plan.
func (g *globals) driftCluster(cfg *config.Config) (cluster, error) {
	simulated := g.simulated != "" || (cfg != nil && cfg.Cluster != nil && cfg.Cluster.Simulated != "")
	if g.kubeconfig == "" && g.context == "" && !simulated {
		if rc, err := rest.InClusterConfig(); err == nil {
			c, err := kubernetes.NewForConfig(rc, "in-cluster", kubernetes.Options{WrapTransport: g.kubeTransport()})
			if err != nil {
				return nil, err
			}
			return kubeCluster{c}, nil
		}
	}
	return g.openCluster(cfg)
}

// writeFileAtomic writes a file through a temporary file in the same
// directory and a rename, so that a reader (node-exporter's textfile
// collector) never sees it half written. The temporary name does not end
// in .prom, so the collector ignores it.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		done = true
		return err
	}
	done = true
	return nil
}
