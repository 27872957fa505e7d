package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// fleetResult is every measurement of the fleet mode (-fleet N).
type fleetResult struct {
	size    gen.Size
	members int
	// objects is one member's object count.
	objects int
	// plan is the fleet's no-op plan at the default parallelism, planN
	// with --fleet-parallelism N, oneByOne the members planned one after
	// another (gpuform plan --cluster NAME, N processes), load the fleet's
	// configuration load (gpuform validate), lists every member's LISTs
	// replayed at once, and base the baseline's fleet plan (-baseline).
	plan, planN, oneByOne, load, lists, base sample
	// planCPU and baseCPU are the CPU times (user and system) of plan's
	// and base's runs: less noisy than their wall times on shared cores.
	planCPU, baseCPU sample
	// singles is the N members planned one after another as N
	// single-cluster configurations (the size's, with an unlabelled
	// cluster block reaching the member): what planning them costs
	// without a fleet. singlesErr says why it was not measured.
	singles                            sample
	singlesErr                         string
	planRSS, planNRSS, baseRSS, oneRSS int64
	listReqs                           int
}

// fleetFiles are the paths of the fleet mode's files.
type fleetFiles struct {
	sizeFiles
	// config is the fleet configuration: the size's, with one cluster
	// block per member, each reached through the member's kubeconfig copied
	// beside it.
	config string
}

// member is the name of member i.
func member(i int) string { return fmt.Sprintf("c%d", i) }

// measureFleet measures a fleet of n harness clusters of size s: each
// applied by the fleet's apply, then, -runs times, the fleet's no-op plan
// (default parallelism and --fleet-parallelism n), the members planned one
// after another, and the floor (the fleet's configuration loaded once plus
// every member's LISTs replayed at once).
func (b *bench) measureFleet(ctx context.Context, s gen.Size, n int) (*fleetResult, error) {
	res := &fleetResult{size: s, members: n}
	f := fleetFiles{sizeFiles: newSizeFiles(filepath.Join(b.work, "fleet"))}
	f.config = filepath.Join(f.dir, "fleet")
	if err := writeConfigs(f.sizeFiles, s.Options()); err != nil {
		return nil, err
	}
	sr := &sizeResult{size: s}
	if err := b.render(ctx, sr, f.sizeFiles); err != nil {
		return nil, err
	}
	res.objects = sr.objects
	start := time.Now()
	if err := b.prepareTemplate(ctx, f.template, f.pools, gen.Nodes(s.Nodes)); err != nil {
		return nil, fmt.Errorf("prepare the cluster: %w", err)
	}
	b.logf("fleet: template cluster of size %s ready in %s", s.Name, time.Since(start).Round(time.Second))
	servers, err := b.startFleet(f, n)
	defer func() {
		for _, srv := range servers {
			srv.Stop()
		}
	}()
	if err != nil {
		return nil, err
	}
	if err := writeFleetConfig(f, n); err != nil {
		return nil, err
	}
	if err := writeSingleConfigs(f, n); err != nil {
		return nil, err
	}
	start = time.Now()
	// On the shared cores a member's API server can stall past the lock's
	// renewal and that member's apply stops: apply again, it converges.
	for try := 1; ; try++ {
		r, err := b.fleetGpuform(ctx, b.gpuformBin, f, "apply", "--auto-approve")
		if err == nil && r.exit == 0 {
			break
		}
		if err != nil || try == 3 {
			return nil, fmt.Errorf("fleet apply: exit %d: %v\n%s%s", r.exit, err, trim(r.stdout), trim(r.stderr))
		}
		b.logf("fleet: apply exit %d, again:\n%s", r.exit, trim(r.stderr))
	}
	b.logf("fleet: %d members of %d objects applied in %s", n, res.objects, time.Since(start).Round(time.Second))
	for i := range b.runs {
		if err := b.measureFleetRun(ctx, res, f, servers, i%2 == 1); err != nil {
			return nil, err
		}
		b.logf("fleet: plan %s, --fleet-parallelism %d %s, one after another %s, load %s, LISTs at once %s (%d requests)",
			secs(res.plan[i]), n, secs(res.planN[i]), secs(res.oneByOne[i]), secs(res.load[i]), secs(res.lists[i]), res.listReqs)
		if i < len(res.singles) {
			b.logf("fleet: %d single-cluster configurations one after another %s", n, secs(res.singles[i]))
		}
	}
	return res, nil
}

// startFleet starts n copies of the template, one after another (each
// harness takes its memory as it starts).
func (b *bench) startFleet(f fleetFiles, n int) ([]*kubeapitest.Server, error) {
	var servers []*kubeapitest.Server
	for i := range n {
		srv, err := startCopy(f.template, filepath.Join(f.dir, "run-"+member(i)))
		if err != nil {
			return servers, fmt.Errorf("start member %s: %w", member(i), err)
		}
		servers = append(servers, srv)
		kc, err := os.ReadFile(srv.Kubeconfig)
		if err != nil {
			return servers, err
		}
		if err := os.MkdirAll(f.config, 0o755); err != nil {
			return servers, err
		}
		if err := os.WriteFile(filepath.Join(f.config, member(i)+".kubeconfig"), kc, 0o600); err != nil {
			return servers, err
		}
	}
	b.logf("fleet: %d harness clusters started", n)
	return servers, nil
}

// writeFleetConfig writes the fleet configuration: the size's main.hcl
// (everything on every member: nothing in it is placed) and one cluster
// block per member.
func writeFleetConfig(f fleetFiles, n int) error {
	src, err := os.ReadFile(filepath.Join(f.full, gen.FileName))
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.Write(src)
	for i := range n {
		fmt.Fprintf(&sb, "\ncluster %q {\n  kubeconfig = %q\n}\n", member(i), member(i)+".kubeconfig")
	}
	return os.WriteFile(filepath.Join(f.config, gen.FileName), []byte(sb.String()), 0o644)
}

// single is the directory of member i's single-cluster configuration.
func (f fleetFiles) single(i int) string { return filepath.Join(f.dir, "single-"+member(i)) }

// writeSingleConfigs writes, for every member, the size's configuration
// with an unlabelled cluster block reaching that member alone.
func writeSingleConfigs(f fleetFiles, n int) error {
	src, err := os.ReadFile(filepath.Join(f.full, gen.FileName))
	if err != nil {
		return err
	}
	for i := range n {
		if err := os.MkdirAll(f.single(i), 0o755); err != nil {
			return err
		}
		kc, err := os.ReadFile(filepath.Join(f.config, member(i)+".kubeconfig"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(f.single(i), "kubeconfig"), kc, 0o600); err != nil {
			return err
		}
		cfg := string(src) + "\ncluster {\n  kubeconfig = \"kubeconfig\"\n}\n"
		if err := os.WriteFile(filepath.Join(f.single(i), gen.FileName), []byte(cfg), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// planSingles plans the members one after another as single-cluster
// configurations. Where one is not a no-op on what the fleet applied (the
// two compile differently), it is not measured and the table says why.
func (b *bench) planSingles(ctx context.Context, res *fleetResult, f fleetFiles, servers []*kubeapitest.Server) error {
	if res.singlesErr != "" {
		return nil
	}
	b.quietFleet(ctx, servers)
	var total time.Duration
	for i := range servers {
		r, err := run(ctx, nil, b.gpuformBin, "--no-color", "--allow-config-kubeconfig", "--chdir", f.single(i), "-v", "2", "plan", "--detailed-exitcode")
		if err != nil {
			return err
		}
		if r.exit != 0 {
			res.singlesErr = fmt.Sprintf("exit %d, not a no-op", r.exit)
			b.logf("fleet: member %s as a single cluster: plan exit %d, not measured:\n%s", member(i), r.exit, trim(r.stdout))
			return nil
		}
		total += r.wall
	}
	res.singles = append(res.singles, total)
	return nil
}

// fleetGpuform runs the gpuform binary bin on the fleet configuration,
// each member reached through its cluster block's kubeconfig.
func (b *bench) fleetGpuform(ctx context.Context, bin string, f fleetFiles, args ...string) (result, error) {
	return run(ctx, nil, bin, append([]string{"--no-color", "--allow-config-kubeconfig", "--chdir", f.config}, args...)...)
}

// quietFleet has every member's API server collect its garbage, then
// waits until all are idle (quiet; the waits side by side, so that the
// N members wait about as long as one).
func (b *bench) quietFleet(ctx context.Context, servers []*kubeapitest.Server) {
	for _, s := range servers {
		b.collectOn(ctx, s)
	}
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { settle(ctx, s.PID()) })
	}
	wg.Wait()
}

// fleetPlan runs a no-op plan of the fleet with extra flags and returns
// its run.
func (b *bench) fleetPlan(ctx context.Context, bin string, f fleetFiles, servers []*kubeapitest.Server, extra ...string) (result, error) {
	b.quietFleet(ctx, servers)
	r, err := b.fleetGpuform(ctx, bin, f, append([]string{"-v", "2", "plan", "--detailed-exitcode"}, extra...)...)
	if err != nil || r.exit != 0 {
		return r, fmt.Errorf("fleet plan %v: exit %d, want 0: %v\n%s%s", extra, r.exit, err, trim(r.stdout), trim(r.stderr))
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("Fleet: %d clusters planned, 0 failed.", len(servers))) {
		return r, fmt.Errorf("fleet plan %v: no fleet summary of %d clusters:\n%s", extra, len(servers), trim(r.stdout))
	}
	return r, nil
}

// measureFleetRun measures once each: the fleet's no-op plan (and the
// baseline's, first where baselineFirst), the same with
// --fleet-parallelism N, the members planned one after another, and the
// floor.
func (b *bench) measureFleetRun(ctx context.Context, res *fleetResult, f fleetFiles, servers []*kubeapitest.Server, baselineFirst bool) error {
	baseline := func() error {
		if b.baseline == nil {
			return nil
		}
		r, err := b.fleetPlan(ctx, b.baseline.bin, f, servers)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		res.base = append(res.base, r.wall)
		res.baseCPU = append(res.baseCPU, r.cpu)
		res.baseRSS = max(res.baseRSS, r.maxRSS)
		b.logf("fleet: baseline plan %s (peak RSS %d MB)", secs(r.wall), r.maxRSS>>20)
		return nil
	}
	if baselineFirst {
		if err := baseline(); err != nil {
			return err
		}
	}
	r, err := b.fleetPlan(ctx, b.gpuformBin, f, servers)
	if err != nil {
		return err
	}
	res.plan = append(res.plan, r.wall)
	res.planCPU = append(res.planCPU, r.cpu)
	res.planRSS = max(res.planRSS, r.maxRSS)
	if !baselineFirst {
		if err := baseline(); err != nil {
			return err
		}
	}
	r, err = b.fleetPlan(ctx, b.gpuformBin, f, servers, "--fleet-parallelism", fmt.Sprint(len(servers)))
	if err != nil {
		return err
	}
	res.planN = append(res.planN, r.wall)
	res.planNRSS = max(res.planNRSS, r.maxRSS)

	// One after another: every member's plan a process of its own.
	b.quietFleet(ctx, servers)
	var total time.Duration
	lists := make([][]string, len(servers))
	for i := range servers {
		r, err := b.fleetGpuform(ctx, b.gpuformBin, f, "-v", "2", "plan", "--detailed-exitcode", "--cluster", member(i))
		if err != nil || r.exit != 0 {
			return fmt.Errorf("plan --cluster %s: exit %d, want 0: %v\n%s%s", member(i), r.exit, err, trim(r.stdout), trim(r.stderr))
		}
		total += r.wall
		res.oneRSS = max(res.oneRSS, r.maxRSS)
		lists[i] = listURLs(requests(r.stderr))
		if len(lists[i]) == 0 {
			return fmt.Errorf("no LIST request in plan --cluster %s's -v 2 log:\n%s", member(i), trim(r.stderr))
		}
	}
	res.oneByOne = append(res.oneByOne, total)
	if err := b.planSingles(ctx, res, f, servers); err != nil {
		return err
	}

	// The floor: the fleet's configuration loaded once (gpuform validate
	// evaluates it for every member), then every member's LISTs at once.
	b.quietFleet(ctx, servers)
	r, err = b.fleetGpuform(ctx, b.gpuformBin, f, "validate")
	if err != nil || r.exit != 0 {
		return fmt.Errorf("gpuform validate of the fleet: exit %d: %v\n%s", r.exit, err, trim(r.stderr))
	}
	res.load = append(res.load, r.wall)
	b.quietFleet(ctx, servers)
	d, n, err := fleetLists(ctx, servers, lists)
	if err != nil {
		return err
	}
	res.lists = append(res.lists, d)
	res.listReqs = n
	return nil
}

// fleetLists replays every member's LISTs (lists[i] are servers[i]'s) all
// at once, raw (floorLists), and returns how long all took and how many
// requests they made.
func fleetLists(ctx context.Context, servers []*kubeapitest.Server, lists [][]string) (time.Duration, int, error) {
	counts := make([]int, len(servers))
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for i, s := range servers {
		cfg, err := s.RESTConfig()
		if err != nil {
			return 0, 0, err
		}
		for _, u := range lists[i] {
			if p, err := url.Parse(u); err != nil || "https://"+p.Host != strings.TrimSuffix(cfg.Host, "/") {
				return 0, 0, fmt.Errorf("member %s's LIST %s is not on its server %s", member(i), u, cfg.Host)
			}
		}
		g.Go(func() error {
			_, n, err := floorLists(gctx, cfg, lists[i])
			counts[i] = n
			return err
		})
	}
	err := g.Wait()
	d := time.Since(start)
	total := 0
	for _, n := range counts {
		total += n
	}
	if err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	return d, total, nil
}

// fleetTable renders the fleet mode's results as Markdown.
func fleetTable(r *fleetResult) string {
	var b strings.Builder
	floor := r.load.median() + r.lists.median()
	fmt.Fprintf(&b, "\n#### Fleet: %d harness clusters of size %s (%d objects each), no-op plan (seconds: median, min–max)\n\n",
		r.members, r.size.Name, r.objects)
	b.WriteString("| measurement | seconds | CPU seconds | peak RSS |\n|---|---|---|---:|\n")
	fmt.Fprintf(&b, "| fleet plan (default parallelism) | %s | %s | %d MB |\n", cell(r.plan), cell(r.planCPU), r.planRSS>>20)
	fmt.Fprintf(&b, "| fleet plan --fleet-parallelism %d | %s | | %d MB |\n", r.members, cell(r.planN), r.planNRSS>>20)
	fmt.Fprintf(&b, "| %d members one after another (plan --cluster NAME each) | %s | | %d MB (each) |\n", r.members, cell(r.oneByOne), r.oneRSS>>20)
	singles := cell(r.singles)
	if r.singlesErr != "" {
		singles = "– (" + r.singlesErr + ")"
	}
	fmt.Fprintf(&b, "| %d single-cluster configurations one after another (plan each) | %s | | |\n", r.members, singles)
	fmt.Fprintf(&b, "| config load (fleet validate, once) | %s | | |\n", cell(r.load))
	fmt.Fprintf(&b, "| every member's LISTs at once (%d requests) | %s | | |\n", r.listReqs, cell(r.lists))
	fmt.Fprintf(&b, "| floor (load + LISTs) | %s | | |\n", secs(floor))
	if len(r.base) > 0 {
		fmt.Fprintf(&b, "| baseline's fleet plan (default parallelism) | %s | %s | %d MB |\n", cell(r.base), cell(r.baseCPU), r.baseRSS>>20)
	}
	b.WriteString("\n| ratio | value |\n|---|---:|\n")
	fmt.Fprintf(&b, "| fleet plan / one after another | %.2fx |\n", ratio(r.plan.median(), r.oneByOne.median()))
	if len(r.singles) > 0 {
		fmt.Fprintf(&b, "| fleet plan / single-cluster configurations one after another | %.2fx |\n", ratio(r.plan.median(), r.singles.median()))
	}
	fmt.Fprintf(&b, "| fleet plan / floor | %.2fx |\n", ratio(r.plan.median(), floor))
	fmt.Fprintf(&b, "| fleet plan --fleet-parallelism %d / floor | %.2fx |\n", r.members, ratio(r.planN.median(), floor))
	if len(r.base) > 0 {
		fmt.Fprintf(&b, "| fleet plan / baseline's | %.2fx |\n", ratio(r.plan.median(), r.base.median()))
		fmt.Fprintf(&b, "| fleet plan's CPU / baseline's | %.2fx |\n", ratio(r.planCPU.median(), r.baseCPU.median()))
	}
	return b.String()
}

// fleetMode is the run of -fleet N: the fleet of the one size -sizes
// names, its table printed.
func (b *bench) fleetMode(ctx context.Context, o options) error {
	if o.fleet < 2 || o.prepare {
		return fmt.Errorf("-fleet wants at least 2 members and no -prepare")
	}
	var size *gen.Size
	for _, s := range gen.Sizes() {
		if s.Name == o.sizes {
			size = &s
		}
	}
	if size == nil {
		return fmt.Errorf("-fleet measures one size: -sizes S, M or L, not %q", o.sizes)
	}
	r, err := b.measureFleet(ctx, *size, o.fleet)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	fmt.Fprint(os.Stdout, machine(ctx, b)+fleetTable(r))
	return nil
}
