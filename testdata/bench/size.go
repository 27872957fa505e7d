package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// sizeResult is every measurement of one size.
type sizeResult struct {
	size             gen.Size
	objects, changed int

	applyG, applyK        sample
	planNoop, planChanged sample
	load, list, diffK     sample
	// bound is each run's CPU bound of the no-op plan (cpuBound), after
	// the plan's CPU beyond its load's (afterLoad) and the API server's CPU
	// during the plan (server).
	bound, afterLoad, server sample
	planRSS, applyRSS        int64
	planNoopRSS              int64 // of the no-op plans only (planRSS: of every plan)
	// driftPodRSS is the peak RSS of drift with the soft memory limit
	// gpuform sets in a podMemory container (podGoMemLimit).
	driftPodRSS            int64
	planReqs, applyReqs    int
	changedReqs, listReqs  int
	planLists, applyWrites int

	// base is the baseline's measurements (nil without -baseline).
	base *baselineResult
	// turn is measureInTurn's measurements (nil until it runs).
	turn *turnResult
}

// sizeFiles are the paths of one size's generated files and clusters.
type sizeFiles struct {
	dir string
	// full, changed and pools are the configurations: the size's, the
	// same with 10% of the tenants changed, and its pools alone.
	full, changed, pools string
	// rendered is full's objects as YAML (gpuform render), for kubectl.
	rendered string
	// template is the stopped harness every run starts a copy of; run is
	// where that copy runs.
	template, run string
}

func newSizeFiles(dir string) sizeFiles {
	return sizeFiles{
		dir:      dir,
		full:     filepath.Join(dir, "full"),
		changed:  filepath.Join(dir, "changed"),
		pools:    filepath.Join(dir, "pools"),
		rendered: filepath.Join(dir, "objects.yaml"),
		template: filepath.Join(dir, "template"),
		run:      filepath.Join(dir, "run"),
	}
}

// files returns the files of size name in the benchmark's working
// directory.
func (b *bench) files(name string) sizeFiles { return newSizeFiles(filepath.Join(b.work, name)) }

// measureSize runs every measurement of size s.
func (b *bench) measureSize(ctx context.Context, s gen.Size) (*sizeResult, error) {
	res := &sizeResult{size: s}
	if b.baseline != nil {
		res.base = &baselineResult{}
	}
	f := b.files(s.Name)
	if err := writeConfigs(f, s.Options()); err != nil {
		return nil, err
	}
	if err := b.render(ctx, res, f); err != nil {
		return nil, err
	}
	b.logf("size %s: %d tenants, %d models, %d nodes, %d objects", s.Name, s.Tenants, s.Models, s.Nodes, res.objects)

	start := time.Now()
	if err := b.prepareTemplate(ctx, f.template, f.pools, gen.Nodes(s.Nodes)); err != nil {
		return nil, fmt.Errorf("prepare the cluster: %w", err)
	}
	b.logf("size %s: template cluster ready in %s", s.Name, time.Since(start).Round(time.Second))

	if b.prepareOnly {
		srv, err := b.applyGpuform(ctx, res, f)
		if err != nil {
			return nil, err
		}
		srv.Stop()
		b.logf("size %s: prepared: %s (configuration), %s (applied cluster; bin/kubeapi --dir)", s.Name, f.full, f.run)
		return res, nil
	}
	heavy := b.runs
	if n, ok := b.heavyRuns[s.Name]; ok {
		heavy = n
	}
	kept, err := b.measureApplies(ctx, res, f, heavy)
	if err != nil {
		return nil, err
	}
	defer kept.Stop()
	if err := b.measurePlans(ctx, res, f, kept, heavy); err != nil {
		return nil, err
	}
	return res, nil
}

// writeConfigs generates the size's configurations: full (options o),
// changed (10% of the tenants changed) and pools (the pools alone).
func writeConfigs(f sizeFiles, o gen.Options) error {
	oc := o
	oc.ChangePercent = 10
	op := o
	op.Tenants, op.Models = 0, 0
	for _, w := range []struct {
		dir string
		o   gen.Options
	}{{f.full, o}, {f.changed, oc}, {f.pools, op}} {
		if err := gen.Write(w.dir, w.o); err != nil {
			return err
		}
	}
	// Pools are sized by the tenants' quotas (overcommit); the pools-only
	// configuration must declare the same pools.
	return copyPools(f.full, f.pools)
}

// render writes full's objects (gpuform render) to f.rendered and counts
// them into res.
func (b *bench) render(ctx context.Context, res *sizeResult, f sizeFiles) error {
	r, err := run(ctx, nil, b.gpuformBin, "--chdir", f.full, "render")
	if err != nil || r.exit != 0 {
		return fmt.Errorf("render: %v %s", err, trim(r.stderr))
	}
	if err := os.WriteFile(f.rendered, []byte(r.stdout), 0o644); err != nil {
		return err
	}
	res.objects = strings.Count(r.stdout, "\nkind: ") + strings.Count(r.stdout[:min(len(r.stdout), 6)], "kind: ")
	return nil
}

// measureApplies measures the applies from empty, heavy times each:
// kubectl, the baseline (with -baseline) and gpuform alternate on fresh
// copies of the template. It returns the last gpuform cluster, running, for
// the plan measurements; the others are stopped before the next apply
// starts.
func (b *bench) measureApplies(ctx context.Context, res *sizeResult, f sizeFiles, heavy int) (*kubeapitest.Server, error) {
	for i := range heavy {
		if !b.noKubectl {
			if err := b.applyKubectl(ctx, res, f); err != nil {
				return nil, err
			}
		}
		if b.baseline != nil {
			if err := b.applyBaseline(ctx, res, f); err != nil {
				return nil, err
			}
		}
		srv, err := b.applyGpuform(ctx, res, f)
		if err != nil {
			return nil, err
		}
		if i == heavy-1 {
			return srv, nil
		}
		srv.Stop()
	}
	return nil, fmt.Errorf("no apply measured (heavy runs %d)", heavy)
}

// measurePlans measures, on the cluster kept (applied by gpuform), the
// plans, config load and raw LISTs -runs times and kubectl diff heavy times.
func (b *bench) measurePlans(ctx context.Context, res *sizeResult, f sizeFiles, kept *kubeapitest.Server, heavy int) error {
	cfg, err := kept.RESTConfig()
	if err != nil {
		return err
	}
	for i := range max(b.runs, heavy) {
		if i < b.runs {
			if err := b.measurePlanRun(ctx, res, f, kept, cfg, i%2 == 1); err != nil {
				return err
			}
			b.logf("size %s: plan no-op %s, changed %s (%d changes), load %s, raw LISTs %s (%d requests)", res.size.Name,
				secs(res.planNoop[i]), secs(res.planChanged[i]), res.changed, secs(res.load[i]), secs(res.list[i]), res.listReqs)
		}
		if i < heavy && !b.noKubectl {
			b.quiet(ctx, kept)
			r, err := b.kubectl(ctx, kept, "diff", "--server-side", "--force-conflicts", "-f", f.rendered)
			if err != nil || r.exit > 1 {
				return fmt.Errorf("kubectl diff: exit %d: %v\n%s", r.exit, err, trim(r.stderr))
			}
			res.diffK = append(res.diffK, r.wall)
			b.logf("size %s: kubectl diff --server-side %s", res.size.Name, secs(r.wall))
		}
	}
	return nil
}

// measurePlanRun measures once each: gpuform plan no-op, the baseline's
// (with -baseline; first where baselineFirst), gpuform plan with 10%
// changed, config load and the raw LISTs of the no-op plan. The two no-op
// plans swap places from run to run: the second of two plans in a row
// meets the API server's collection of the garbage both made more often
// (the harness's server collects every few plans), which made whichever
// build went second look slower.
func (b *bench) measurePlanRun(ctx context.Context, res *sizeResult, f sizeFiles, kept *kubeapitest.Server, cfg *rest.Config, baselineFirst bool) error {
	if b.baseline != nil && baselineFirst {
		if err := b.planBaseline(ctx, res, f, kept); err != nil {
			return err
		}
	}
	b.quiet(ctx, kept)
	plan, lists, err := b.planNoop(ctx, res, f, kept)
	if err != nil {
		return err
	}
	if b.baseline != nil && !baselineFirst {
		if err := b.planBaseline(ctx, res, f, kept); err != nil {
			return err
		}
	}

	r, err := b.gpuform(ctx, kept, "-v", "2", "--chdir", f.changed, "plan", "--detailed-exitcode")
	if err != nil || r.exit != 2 {
		return fmt.Errorf("gpuform plan (changed) exit %d, want 2: %v\n%s", r.exit, err, trim(r.stderr))
	}
	res.planChanged = append(res.planChanged, r.wall)
	res.planRSS = max(res.planRSS, r.maxRSS)
	res.changedReqs = len(requests(r.stderr))
	res.changed = changes(r.stdout)

	r, err = run(ctx, []string{"GOMEMLIMIT=" + podGoMemLimit()}, b.gpuformBin, "--kubeconfig", kept.Kubeconfig, "--no-color", "--chdir", f.full, "drift")
	if err != nil || r.exit != 0 {
		return fmt.Errorf("gpuform drift (GOMEMLIMIT=%s) exit %d, want 0: %v\n%s", podGoMemLimit(), r.exit, err, trim(r.stderr))
	}
	res.driftPodRSS = max(res.driftPodRSS, r.maxRSS)

	fl, err := b.floor(ctx, f, kept, cfg, lists)
	if err != nil {
		return err
	}
	res.load = append(res.load, fl.load)
	res.list = append(res.list, fl.list)
	res.listReqs = fl.requests
	after := max(0, plan.cpu-fl.loadCPU)
	res.afterLoad = append(res.afterLoad, after)
	res.server = append(res.server, plan.server)
	res.bound = append(res.bound, cpuBound(fl.load, after, plan.server, runtime.NumCPU()))
	return nil
}

// cpuBound is the least wall time a plan can take on cores processors it
// shares with the API server, once its configuration is loaded: the load's
// wall time (no cluster call comes before it), then the CPU time the plan
// used beyond the load's and the API server's during the plan, spread over
// every core. A plan at its bound kept every core busy after its load; only
// less CPU, in gpuform or in the API server, makes it faster.
func cpuBound(load, afterLoad, server time.Duration, cores int) time.Duration {
	return load + (afterLoad+server)/time.Duration(max(1, cores))
}

// floored is what floor measured: the config load (its wall and CPU
// time), the raw LISTs and the API server's CPU while it served them, and
// the requests they made.
type floored struct {
	load, loadCPU, list, listServer time.Duration
	requests                        int
}

// floor measures the floor of f's no-op plan on s: its config load
// (gpuform validate) and its LIST requests, lists, raw (floorLists). Each
// part starts once the harness is idle, as the plan it is the floor of
// does: right after a plan or a drift the API server still collects the
// garbage of serving them, on the cores validate runs on, and has just
// served the same LISTs, so a part started then meets another machine than
// the plan did.
func (b *bench) floor(ctx context.Context, f sizeFiles, s *kubeapitest.Server, cfg *rest.Config, lists []string) (floored, error) {
	var fl floored
	var err error
	b.quiet(ctx, s)
	load, err := b.loadTime(ctx, f)
	if err != nil {
		return floored{}, err
	}
	fl.load, fl.loadCPU = load.wall, load.cpu
	b.quiet(ctx, s)
	fl.listServer = cpuDuring(s.PID(), func() { fl.list, fl.requests, err = floorLists(ctx, cfg, lists) })
	if err != nil {
		return floored{}, fmt.Errorf("floor: %w", err)
	}
	return fl, nil
}

// planNoop measures gpuform plan of the applied configuration (it must find
// nothing to do) and returns what run measured and the LIST requests it
// made.
func (b *bench) planNoop(ctx context.Context, res *sizeResult, f sizeFiles, kept *kubeapitest.Server) (result, []string, error) {
	r, reqs, lists, err := b.noopPlan(ctx, f, kept)
	if err != nil {
		return result{}, nil, err
	}
	res.planNoop = append(res.planNoop, r.wall)
	res.planRSS = max(res.planRSS, r.maxRSS)
	res.planNoopRSS = max(res.planNoopRSS, r.maxRSS)
	b.logf("size %s: plan no-op %s: CPU %s, the API server's %s", res.size.Name, secs(r.wall), secs(r.cpu), secs(r.server))
	res.planReqs = len(reqs)
	res.planLists = len(lists)
	return r, lists, nil
}

// noopPlan runs gpuform plan of the applied configuration on s (it must
// find nothing to do) and returns the run, the API requests it logged and
// its LIST requests among them.
func (b *bench) noopPlan(ctx context.Context, f sizeFiles, s *kubeapitest.Server) (result, []request, []string, error) {
	r, err := b.gpuform(ctx, s, "-v", "2", "--chdir", f.full, "plan", "--detailed-exitcode")
	if err != nil || r.exit != 0 {
		return r, nil, nil, fmt.Errorf("gpuform plan (no-op) exit %d, want 0: %v\n%s%s", r.exit, err, trim(r.stdout), trim(r.stderr))
	}
	reqs := requests(r.stderr)
	lists := listURLs(reqs)
	if len(lists) == 0 {
		return r, nil, nil, fmt.Errorf("no LIST request in gpuform plan's -v 2 log:\n%s", trim(r.stderr))
	}
	return r, reqs, lists, nil
}

// loadTime measures the config load of f's full configuration: gpuform
// validate.
func (b *bench) loadTime(ctx context.Context, f sizeFiles) (result, error) {
	r, err := run(ctx, nil, b.gpuformBin, "--chdir", f.full, "validate")
	if err != nil || r.exit != 0 {
		return result{}, fmt.Errorf("gpuform validate: %v\n%s", err, trim(r.stderr))
	}
	return r, nil
}

// planBaseline measures the baseline's plan of the applied configuration on
// the cluster gpuform applied. It should find nothing to do; where it finds
// changes (the two builds render different objects) the number is kept and
// shown next to its time, which then measures a plan with changes.
func (b *bench) planBaseline(ctx context.Context, res *sizeResult, f sizeFiles, kept *kubeapitest.Server) error {
	b.quiet(ctx, kept)
	r, err := b.runGpuform(ctx, b.baseline.bin, kept, "-v", "2", "--chdir", f.full, "plan", "--detailed-exitcode")
	if err != nil || (r.exit != 0 && r.exit != 2) {
		return fmt.Errorf("baseline gpuform plan (no-op) exit %d, want 0 or 2: %v\n%s%s", r.exit, err, trim(r.stdout), trim(r.stderr))
	}
	res.base.planNoop = append(res.base.planNoop, r.wall)
	res.base.planRSS = max(res.base.planRSS, r.maxRSS)
	res.base.planReqs = len(requests(r.stderr))
	n := 0
	if r.exit == 2 {
		n = changes(r.stdout)
		res.base.planChanges = n
	}
	// This tree's plan of the run is logged with the run (measurePlanRun):
	// here it may not be measured yet.
	b.logf("size %s: baseline plan no-op %s (%d changes): CPU %s, the API server's %s", res.size.Name, secs(r.wall), n, secs(r.cpu), secs(r.server))
	return nil
}

// applyKubectl measures kubectl apply --server-side of the rendered objects
// on a fresh copy of the template cluster.
func (b *bench) applyKubectl(ctx context.Context, res *sizeResult, f sizeFiles) error {
	srv, err := startCopy(f.template, f.run)
	if err != nil {
		return err
	}
	defer srv.Stop()
	b.quiet(ctx, srv)
	r, err := b.kubectl(ctx, srv, "apply", "--server-side", "--validate=false", "-f", f.rendered)
	if err != nil || r.exit != 0 {
		return fmt.Errorf("kubectl apply: %v\n%s", err, trim(r.stderr))
	}
	res.applyK = append(res.applyK, r.wall)
	b.logf("size %s: kubectl apply --server-side %s", res.size.Name, secs(r.wall))
	return nil
}

// applyGpuform measures gpuform apply of the configuration in full on a
// fresh copy of the template cluster, and returns that cluster, running.
func (b *bench) applyGpuform(ctx context.Context, res *sizeResult, f sizeFiles) (*kubeapitest.Server, error) {
	srv, r, reqs, err := b.applyFromEmpty(ctx, b.gpuformBin, f)
	if err != nil {
		return nil, fmt.Errorf("gpuform apply: %w", err)
	}
	res.applyG = append(res.applyG, r.wall)
	res.applyRSS = max(res.applyRSS, r.maxRSS)
	res.applyReqs, res.applyWrites = len(reqs), 0
	for _, q := range reqs {
		if q.method != "GET" {
			res.applyWrites++
		}
	}
	b.logf("size %s: gpuform apply %s (%d requests, peak RSS %d MB)", res.size.Name, secs(r.wall), len(reqs), r.maxRSS>>20)
	return srv, nil
}

// applyBaseline measures the baseline's apply of the configuration in full
// on a fresh copy of the template cluster, and stops that cluster.
func (b *bench) applyBaseline(ctx context.Context, res *sizeResult, f sizeFiles) error {
	srv, r, reqs, err := b.applyFromEmpty(ctx, b.baseline.bin, f)
	if err != nil {
		return fmt.Errorf("baseline gpuform apply: %w", err)
	}
	srv.Stop()
	res.base.applyG = append(res.base.applyG, r.wall)
	res.base.applyRSS = max(res.base.applyRSS, r.maxRSS)
	res.base.applyReqs = len(reqs)
	b.logf("size %s: baseline gpuform apply %s (%d requests, peak RSS %d MB)", res.size.Name, secs(r.wall), len(reqs), r.maxRSS>>20)
	return nil
}

// applyFromEmpty runs the gpuform binary bin's apply of the configuration
// in full on a fresh copy of the template cluster, and returns that cluster,
// running, with the run and the API requests it logged.
func (b *bench) applyFromEmpty(ctx context.Context, bin string, f sizeFiles) (*kubeapitest.Server, result, []request, error) {
	srv, err := startCopy(f.template, f.run)
	if err != nil {
		return nil, result{}, nil, err
	}
	b.quiet(ctx, srv)
	r, err := b.runGpuform(ctx, bin, srv, "-v", "2", "--chdir", f.full, "apply", "--auto-approve")
	if err != nil || r.exit != 0 {
		srv.Stop()
		return nil, r, nil, fmt.Errorf("exit %d: %v\n%s", r.exit, err, trim(r.stderr))
	}
	return srv, r, requests(r.stderr), nil
}

// copyPools writes the pool, priority and mig_layout blocks of full's
// main.hcl (everything before the first tenant) as pools's main.hcl.
func copyPools(full, pools string) error {
	data, err := os.ReadFile(filepath.Join(full, gen.FileName))
	if err != nil {
		return err
	}
	if i := bytes.Index(data, []byte("\ntenant ")); i >= 0 {
		data = data[:i+1]
	}
	return os.WriteFile(filepath.Join(pools, gen.FileName), data, 0o644)
}

// changes returns the number of changes in plan output's summary line.
func changes(out string) int {
	m := regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change, (\d+) to destroy`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	var a, c, d int
	fmt.Sscan(m[1], &a)
	fmt.Sscan(m[2], &c)
	fmt.Sscan(m[3], &d)
	return a + c + d
}

// listURLs returns the LIST requests among reqs (their first pages, when
// paginated): every GET but discovery's (/api, /apis and group versions).
// A plan makes no other GET.
func listURLs(reqs []request) []string {
	var out []string
	for _, q := range reqs {
		u, err := url.Parse(q.url)
		if q.method != "GET" || err != nil || u.Query().Get("continue") != "" || discoveryPath(u.Path) {
			continue
		}
		out = append(out, q.url)
	}
	return out
}

// discoveryPath reports whether path is a discovery document: /api, /apis,
// /api/v1 or /apis/GROUP/VERSION (a LIST's path names a resource after
// those).
func discoveryPath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// continueToken finds a list's continue token: near the start of a JSON
// list response of a built-in kind (metadata before items), near the end of
// a custom resource's (its keys are sorted, so items come first).
var continueToken = regexp.MustCompile(`"continue":"([^"]*)"`)

// floorLists issues the LIST requests raw, all at once as gpuform's refresh
// does, following continue tokens, reading every byte without decoding it.
func floorLists(ctx context.Context, cfg *rest.Config, urls []string) (time.Duration, int, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, 0, err
	}
	var mu sync.Mutex
	n := 0
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(len(urls))
	for _, first := range urls {
		g.Go(func() error {
			next := first
			for next != "" {
				req, err := http.NewRequestWithContext(gctx, http.MethodGet, next, nil)
				if err != nil {
					return err
				}
				req.Header.Set("Accept", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					return err
				}
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("GET %s: %s", next, resp.Status)
				}
				mu.Lock()
				n++
				mu.Unlock()
				next = ""
				m := continueToken.FindSubmatch(body[:min(len(body), 4096)])
				if m == nil {
					m = continueToken.FindSubmatch(body[max(0, len(body)-4096):])
				}
				if m != nil && len(m[1]) > 0 {
					u, _ := url.Parse(first)
					q := u.Query()
					q.Set("continue", string(m[1]))
					u.RawQuery = q.Encode()
					next = u.String()
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return time.Since(start), n, err
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
