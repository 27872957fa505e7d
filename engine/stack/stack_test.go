package stack_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/drift"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/providers/sim"
)

// quickstart copies the quickstart example and its simulated cluster into
// a temporary directory and opens the cluster.
func quickstart(t *testing.T) (string, stack.Cluster) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"main.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, openSim(t, dir)
}

func openSim(t *testing.T, dir string) stack.Cluster {
	t.Helper()
	c, err := sim.OpenIn(dir, "cluster.sim.hcl", sim.CatalogGPUs{})
	if err != nil {
		t.Fatal(err)
	}
	return sim.StackCluster(c)
}

// applyOpts are apply's defaults, as the CLI passes them.
func applyOpts() stack.ApplyOptions {
	return stack.ApplyOptions{Safety: engine.SafetyOptions{MaxDeletes: engine.DefaultMaxDeletes}, LockHolder: "test"}
}

// Plan, apply, and plan again: the second plan has nothing to do, the
// lock is taken and released, and the hooks see the plan and every change.
func TestPlanApplyReplan(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	var phases []string
	st := stack.New(stack.Dir(dir), stack.Using(cl), stack.Options{Phase: func(name string, _ time.Duration) { phases = append(phases, name) }})
	res, err := st.Plan(ctx, stack.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Plan.Summary, (engine.Summary{Add: 19, Change: 3}); got != want { // quickstart: 17 objects (with the stack's 5 policies and 5 bindings) and 2 PrometheusRules
		t.Errorf("plan summary = %+v, want %+v", got, want)
	}
	if res.Plan.Capacity == nil || len(res.Plan.Capacity.Rows) == 0 {
		t.Errorf("the plan has no capacity")
	}
	if want := stack.SimulatedContextPrefix + filepath.Join(dir, "cluster.sim.hcl"); res.Context != want {
		t.Errorf("context = %q, want %q", res.Context, want)
	}
	if got := strings.Join(phases, " "); got != "load compile refresh diff" {
		t.Errorf("phases = %q", got)
	}

	var planned *engine.Plan
	started := 0
	opts := applyOpts()
	var plannedCfg *config.Config
	opts.Planned = func(cfg *config.Config, p *engine.Plan) error { plannedCfg, planned = cfg, p; return nil }
	opts.Engine.Progress = func(ev engine.Event) {
		if ev.Kind == engine.EventStart {
			started++
		}
	}
	ap, err := st.Apply(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !ap.OK() || ap.Report == nil || ap.Report.Count(engine.OutcomeApplied) != 22 {
		t.Fatalf("apply: OK %v, report %+v", ap.OK(), ap.Report)
	}
	if planned != ap.Plan || plannedCfg == nil || plannedCfg.Settings.Stack != "quickstart" || started != 22 {
		t.Errorf("hooks: planned %v (want the applied plan) from %v, %d changes started, want 22", planned != nil, plannedCfg != nil, started)
	}
	if ap.LockID == "" || ap.UnlockErr != nil {
		t.Errorf("lock %q released with %v", ap.LockID, ap.UnlockErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster.sim.state.json.lock")); !os.IsNotExist(err) {
		t.Errorf("the lock file was left behind: %v", err)
	}

	again, err := stack.New(stack.Dir(dir), stack.Using(openSim(t, dir)), stack.Options{}).Plan(ctx, stack.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Plan.HasChanges() {
		t.Errorf("the plan after apply has changes: %+v", again.Plan.Summary)
	}
}

// An invalid configuration ends every call before the cluster is opened,
// with its diagnostics passed to the hook and in the error.
func TestInvalidConfigurationReadsNoCluster(t *testing.T) {
	ctx := context.Background()
	src := &fakeGit{head: commitA, commits: map[string]fakeRev{commitA: {files: fstest.MapFS{"main.hcl": {Data: []byte("gpuform {\n  stack = 1 +\n}\n")}}}}}
	connect := func(context.Context, *config.Config) (stack.Cluster, error) {
		t.Fatal("connected to a cluster for an invalid configuration")
		return nil, nil
	}
	var reported hcl.Diagnostics
	st := stack.New(src, connect, stack.Options{Diagnostics: func(_ *config.Config, d hcl.Diagnostics) { reported = append(reported, d...) }})
	calls := map[string]func() error{
		"plan":    func() error { _, err := st.Plan(ctx, stack.PlanOptions{}); return err },
		"apply":   func() error { _, err := st.Apply(ctx, applyOpts()); return err },
		"drift":   func() error { _, err := st.Drift(ctx); return err },
		"preview": func() error { _, err := st.Preview(ctx, stack.PreviewOptions{Base: commitA}); return err },
		"compile": func() error { _, err := st.Compile(ctx); return err },
	}
	for name, call := range calls {
		reported = nil
		err := call()
		var ce *engine.ConfigError
		if !errors.As(err, &ce) || !ce.Diags.HasErrors() {
			t.Errorf("%s: error %v, want a *engine.ConfigError", name, err)
		}
		if !reported.HasErrors() {
			t.Errorf("%s: the diagnostics hook saw no error", name)
		}
	}
	if _, diags := st.Validate(ctx); !diags.HasErrors() {
		t.Errorf("Validate found no error")
	}
}

// A hook's refusal (apply's "yes") ends Apply with nothing changed and the
// lock released; a held lock is an *engine.LockHeldError until
// ForceUnlock removes it.
func TestApplyRefusedAndLocked(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	st := stack.New(stack.Dir(dir), stack.Using(cl), stack.Options{})
	no := errors.New("not approved")
	opts := applyOpts()
	opts.Approve = func(context.Context, *engine.Plan) error { return no }
	res, err := st.Apply(ctx, opts)
	if !errors.Is(err, no) || res == nil || res.Report != nil || res.UnlockErr != nil {
		t.Fatalf("refused apply: %v, %+v", err, res)
	}

	held, err := cl.Lock(ctx, "quickstart", "someone else", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Apply(ctx, applyOpts())
	var lh *engine.LockHeldError
	if !errors.As(err, &lh) || lh.ID != held.ID {
		t.Fatalf("apply under a held lock: %v, want the lock %s held", err, held.ID)
	}
	name, err := st.ForceUnlock(ctx, "", held.ID)
	if err != nil || name != "quickstart" {
		t.Fatalf("ForceUnlock = %q, %v", name, err)
	}
	if res, err := st.Apply(ctx, applyOpts()); err != nil || !res.OK() || res.Report == nil {
		t.Fatalf("apply after force-unlock: %v, %+v", err, res)
	}
}

// A saved plan applies exactly once: applied again, what it read has
// changed, and it is refused as stale.
func TestApplyPlanOnceThenStale(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	res, err := stack.New(stack.Dir(dir), stack.Using(cl), stack.Options{}).Plan(ctx, stack.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pf, err := engine.NewPlanFile(res.Plan, "test", res.Config.Hash, res.Context, false)
	if err != nil {
		t.Fatal(err)
	}
	saved := stack.New(nil, stack.Using(cl), stack.Options{})
	ap, err := saved.ApplyPlan(ctx, pf, applyOpts())
	if err != nil || !ap.OK() || ap.Report == nil {
		t.Fatalf("ApplyPlan: %v, %+v", err, ap)
	}
	_, err = saved.ApplyPlan(ctx, pf, applyOpts())
	var stale *engine.StalePlanError
	if !errors.As(err, &stale) || len(stale.Objects) == 0 {
		t.Fatalf("second ApplyPlan: %v, want a *engine.StalePlanError", err)
	}
}

// Drift across commits: an added block not applied yet is unapplied, a
// deleted object is missing, and Fix leaves the cluster in sync.
func TestDriftAndFix(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	src := quickstartGit(t)
	src.head = commitA
	if res, err := stack.New(src, stack.Using(cl), stack.Options{}).Apply(ctx, applyOpts()); err != nil || !res.OK() {
		t.Fatalf("apply at %s: %v, %+v", commitA, err, res)
	}
	if err := cl.Delete(ctx, engine.Key{Kind: "ResourceQuota", Namespace: "research", Name: "gpuform"}, "v1"); err != nil {
		t.Fatal(err)
	}

	src.head = commitB
	st := stack.New(src, stack.Using(openSim(t, dir)), stack.Options{})
	rep, err := st.Drift(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts := rep.Counts()
	if counts[drift.Unapplied] != 1 || counts[drift.Missing] != 1 || counts[drift.LiveEdit] != 0 {
		t.Errorf("drift counts = %v, want 1 unapplied, 1 missing\n%+v", counts, rep.Items)
	}
	if rep.Commit != commitB || rep.ConfigSource == nil || rep.ConfigSource.Commit != commitB {
		t.Errorf("drift commit = %q, source %+v, want %s", rep.Commit, rep.ConfigSource, commitB)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings: %q", rep.Warnings)
	}
	if !rep.Fixable() {
		t.Fatalf("the drift is not fixable")
	}

	approved := 0
	opts := applyOpts()
	opts.Approve = func(context.Context, *engine.Plan) error { approved++; return nil }
	fix, err := st.Fix(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if approved != 1 || fix.Apply == nil || fix.Apply.Report == nil || !fix.Apply.OK() {
		t.Fatalf("fix: approved %d times, %+v", approved, fix.Apply)
	}
	if fix.After == nil || !fix.After.InSync() {
		t.Errorf("drift after the fix: %+v", fix.After)
	}
}

// Outside git every difference is unapplied, and drift says it could not
// tell hand edits without the applied configurations.
func TestDriftOutsideGit(t *testing.T) {
	ctx := context.Background()
	dir, cl := quickstart(t)
	st := stack.New(stack.Dir(dir), stack.Using(cl), stack.Options{})
	rep, err := st.Drift(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.InSync() || rep.Counts()[drift.Unapplied] == 0 || rep.Commit != "" {
		t.Errorf("drift outside git before any apply: %+v", rep)
	}
}

// The preview compares head with base on the same cluster: the added
// block, the plan and both capacities; an unreadable base shows every block
// as added and says why.
func TestPreview(t *testing.T) {
	ctx := context.Background()
	_, cl := quickstart(t)
	src := quickstartGit(t)
	src.head = commitB
	st := stack.New(src, stack.Using(cl), stack.Options{})
	res, err := st.Preview(ctx, stack.PreviewOptions{Base: commitA})
	if err != nil {
		t.Fatal(err)
	}
	pv := res.Preview
	if pv.Base == nil || pv.Base.Commit != commitA || pv.Base.Ref != commitA || pv.BaseError != "" {
		t.Errorf("base = %+v (%q)", pv.Base, pv.BaseError)
	}
	if len(pv.ConfigChanges) != 1 || !strings.Contains(fmt.Sprint(pv.ConfigChanges[0]), "urgent") {
		t.Errorf("config changes = %+v, want the priority added", pv.ConfigChanges)
	}
	if pv.Plan.Summary.Add != 20 || pv.Plan.ConfigSource == nil || pv.Plan.ConfigSource.Commit != commitB {
		t.Errorf("plan = %+v from %+v", pv.Plan.Summary, pv.Plan.ConfigSource)
	}
	if len(pv.CapacityBefore) == 0 || pv.Plan.Capacity == nil || len(pv.CapacityProblems) != 0 {
		t.Errorf("capacity before %d rows, after %+v, problems %q", len(pv.CapacityBefore), pv.Plan.Capacity, pv.CapacityProblems)
	}

	var unreadable hcl.Diagnostics
	res, err = stack.New(src, stack.Using(cl), stack.Options{}).Preview(ctx, stack.PreviewOptions{
		Base:           "no-such-ref",
		BaseUnreadable: func(_ *config.Config, errs hcl.Diagnostics) { unreadable = errs },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !unreadable.HasErrors() || !strings.Contains(res.Preview.BaseError, "no-such-ref") || len(res.Preview.ConfigChanges) < 5 {
		t.Errorf("unreadable base: hook %v, error %q, %d changes", unreadable, res.Preview.BaseError, len(res.Preview.ConfigChanges))
	}
}

// Nodes lists the simulated cluster's GPU nodes.
func TestNodes(t *testing.T) {
	dir, cl := quickstart(t)
	nodes, err := stack.New(stack.Dir(dir), stack.Using(cl), stack.Options{}).Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].Model != "A100-80GB" || nodes[0].GPUs != 4 {
		t.Errorf("nodes = %+v", nodes)
	}
}

// Two commits of the quickstart, as git would stamp them.
const (
	commitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// quickstartGit is a repository with the quickstart at commitA and, at
// commitB, one priority more.
func quickstartGit(t *testing.T) *fakeGit {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	a := string(src)
	b := a + "\npriority \"urgent\" {\n  value = 2000\n}\n"
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &fakeGit{commits: map[string]fakeRev{
		commitA: {files: fstest.MapFS{"main.hcl": {Data: []byte(a)}}, when: when},
		commitB: {files: fstest.MapFS{"main.hcl": {Data: []byte(b)}}, when: when.Add(time.Hour)},
	}}
}

// fakeGit is a stack.Source with commits in memory; ref "" is head.
type fakeGit struct {
	head    string
	commits map[string]fakeRev
}

type fakeRev struct {
	files fstest.MapFS
	when  time.Time
}

func (g *fakeGit) Read(_ context.Context, ref string) (*stack.Files, error) {
	asked := ref
	if ref == "" {
		ref = g.head
	}
	r, ok := g.commits[ref]
	if !ok {
		return nil, fmt.Errorf("resolve git ref %q: reference not found", ref)
	}
	return &stack.Files{FS: r.files, Origin: engine.ConfigSource{Ref: asked, Commit: ref}, Time: r.when}, nil
}
