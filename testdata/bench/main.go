// Command bench measures gpuform side by side with kubectl and with the
// floor (the same LIST requests issued raw, plus config load), on the real
// kube-apiserver + etcd harness, at the workload sizes of testdata/gen:
//
//	go run ./testdata/bench [-sizes S,M,L] [-runs 3] [-heavy-runs L=1] [-baseline REF] [-out docs/performance.md]
//	go run ./testdata/bench -fleet 10 [-sizes S] [-runs 3] [-baseline REF]
//
// For each size it generates the configuration (and a copy with 10% of the
// tenants changed), renders it with `gpuform render`, prepares a template
// cluster (CRDs, GPU nodes, pools applied), and then, each measurement
// repeated -runs times on fresh copies of the template:
//
//   - `gpuform apply` from empty vs `kubectl apply --server-side
//     --validate=false` of the rendered objects;
//   - on the applied cluster: `gpuform plan` (no-op and 10% changed),
//     `kubectl diff --server-side` of the rendered objects, `gpuform
//     validate` (config load) and the raw LIST requests plan issued;
//   - gpuform's peak RSS and API request count (from its -v 2 log).
//
// Once every size is measured (two or more), the no-op plan and its floor
// are measured again with the sizes in turn: one of each size per round, on
// the applied clusters, all running, the order reversed every other round,
// so that plan time per 1,000 objects compares the sizes at the same
// minutes (measureInTurn).
//
// With -baseline REF, gpuform is also built from the commit REF names (git
// archive of it, so uncommitted changes are not part of it), and its apply
// from empty and no-op plan are measured interleaved with the working
// tree's (each apply: baseline, then this tree; the no-op plans on the same
// cluster, each build first in every other run); a further table gives both medians
// and the ratio this tree / baseline.
//
// With -fleet N it measures a fleet instead (fleet.go): N harness clusters
// of the one size -sizes names, applied by the fleet's apply, and the
// fleet's no-op plan against the N members planned one after another and
// against its floor; it prints its table and writes no file.
//
// It writes the table between the bench markers of the -out file. The
// gpuform binary is built first; kubectl is $KUBECTL, else bin/kubectl built
// from the Go module proxy (testdata/kubectl, the harness's Kubernetes
// version).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// bench holds what every measurement needs.
type bench struct {
	gpuformBin, kubectlBin string
	// baseline is the gpuform build measured alongside (nil without -baseline).
	baseline  *baseline
	work      string
	runs      int
	heavyRuns map[string]int
	log       io.Writer
	// prepareOnly stops each size once its clusters are ready (-prepare).
	prepareOnly bool
	// noKubectl skips kubectl's apply and diff (-kubectl=false): their
	// cells read "–".
	noKubectl bool
	// kubeletStatus gives the GPU nodes a kubelet's status (-kubelet-status).
	kubeletStatus bool
	// collectErr is the first error of quiet's collection, logged once.
	collectErr error
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == measureChildArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	var o options
	flag.StringVar(&o.sizes, "sizes", "S,M,L", "comma-separated sizes to measure (S, M, L)")
	flag.IntVar(&o.runs, "runs", 3, "repetitions of every measurement")
	flag.StringVar(&o.heavyRuns, "heavy-runs", "", "repetitions per size of the long measurements (applies from empty, kubectl diff), e.g. L=1 (default: -runs)")
	flag.StringVar(&o.out, "out", "docs/performance.md", "markdown file whose bench section receives the table (empty: stdout only)")
	flag.StringVar(&o.work, "work", "", "working directory for configs and clusters (default: a temporary one, removed)")
	flag.BoolVar(&o.prepare, "prepare", false, "only prepare each size in -work: its configurations, the template cluster, and WORK/SIZE/run applied by gpuform (stopped; start it with bin/kubeapi --dir), for profiling by hand; measures nothing")
	flag.StringVar(&o.baseline, "baseline", "", "git ref (e.g. main~5) whose gpuform is built and measured alongside this tree's, interleaved: its apply from empty and no-op plan, and the ratio this tree / baseline")
	flag.BoolVar(&o.kubectl, "kubectl", true, "also measure kubectl (apply from empty, diff); false: gpuform, the baseline and the floor only")
	flag.IntVar(&o.fleet, "fleet", 0, "measure a fleet of `N` harness clusters of the one size -sizes names instead (fleet plan, the members one after another, the floor); prints its table, writes no file")
	flag.BoolVar(&o.kubeletStatus, "kubelet-status", false, "give every GPU node the status a kubelet reports (conditions, addresses, nodeInfo, 50 images), as on a real cluster, not only its capacity")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.prepare && o.work == "" {
		fmt.Fprintln(os.Stderr, "bench: -prepare needs -work")
		os.Exit(2)
	}
	if o.prepare && o.baseline != "" {
		fmt.Fprintln(os.Stderr, "bench: -prepare measures nothing, -baseline has nothing to compare")
		os.Exit(2)
	}
	if err := mainErr(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the command line's flags.
type options struct {
	sizes, heavyRuns, out, work string
	runs                        int
	// fleet is the fleet mode's number of members (0: no fleet mode).
	fleet                  int
	prepare, kubeletStatus bool
	kubectl                bool
	// baseline is a git ref to build and measure alongside ("": none).
	baseline string
}

func mainErr(ctx context.Context, o options) error {
	if o.runs < 1 {
		return fmt.Errorf("-runs must be at least 1")
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	b := &bench{runs: o.runs, heavyRuns: map[string]int{}, log: os.Stderr, prepareOnly: o.prepare, kubeletStatus: o.kubeletStatus, noKubectl: !o.kubectl || o.fleet > 0}
	for _, kv := range strings.Split(o.heavyRuns, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 {
			return fmt.Errorf("-heavy-runs: want SIZE=N, got %q", kv)
		}
		b.heavyRuns[k] = n
	}
	work := o.work
	if work == "" {
		if work, err = os.MkdirTemp("", "gpuform-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	b.work = work
	if b.gpuformBin, err = buildGpuform(ctx, root, work); err != nil {
		return err
	}
	if o.baseline != "" {
		if b.baseline, err = buildBaseline(ctx, root, work, o.baseline); err != nil {
			return err
		}
		b.logf("baseline: gpuform of %s built", b.baseline.label())
	}
	if !b.noKubectl {
		if b.kubectlBin, err = findKubectl(ctx, root); err != nil {
			return err
		}
	}
	if _, err := os.Stat(kubeapitest.Binary()); err != nil {
		return fmt.Errorf("the API server harness is missing: run `make kubeapi` first: %w", err)
	}
	if o.fleet > 0 {
		return b.fleetMode(ctx, o)
	}
	var results []*sizeResult
	for _, name := range strings.Split(o.sizes, ",") {
		var size *gen.Size
		for _, s := range gen.Sizes() {
			if s.Name == name {
				size = &s
			}
		}
		if size == nil {
			return fmt.Errorf("unknown size %q (want S, M or L)", name)
		}
		r, err := b.measureSize(ctx, *size)
		if err != nil {
			return fmt.Errorf("size %s: %w", name, err)
		}
		if o.prepare {
			continue
		}
		results = append(results, r)
		// Written after each size, so a long run keeps what it measured.
		if err := b.report(ctx, root, o.out, results); err != nil {
			return err
		}
	}
	if o.prepare || len(results) < 2 {
		return nil
	}
	if err := b.measureInTurn(ctx, results); err != nil {
		return err
	}
	return b.report(ctx, root, o.out, results)
}

// report prints the tables of results and writes them into out's bench
// section (out empty: stdout only).
func (b *bench) report(ctx context.Context, root, out string, results []*sizeResult) error {
	report := machine(ctx, b) + "\n" + table(results) + turnTable(results)
	if b.baseline != nil {
		report += baselineTable(results, b.baseline)
	}
	fmt.Fprint(os.Stdout, report)
	if out == "" {
		return nil
	}
	return writeSection(filepath.Join(root, out), report)
}

// repoRoot returns the repository root (the directory holding go.mod).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "testdata", "bench")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run from inside the gpuform repository")
		}
		dir = parent
	}
}

// buildGpuform builds gpuform into work.
func buildGpuform(ctx context.Context, root, work string) (string, error) {
	bin := filepath.Join(work, "gpuform")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gpuform")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build gpuform: %w", err)
	}
	return bin, nil
}

// findKubectl returns $KUBECTL, or bin/kubectl, built from the Go module
// proxy (testdata/kubectl) when missing. An installed kubectl in PATH is not
// used by default: its version may be far from the harness's.
func findKubectl(ctx context.Context, root string) (string, error) {
	if k := os.Getenv("KUBECTL"); k != "" {
		return k, nil
	}
	bin := filepath.Join(root, "bin", "kubectl")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintln(os.Stderr, "bench: building kubectl from the Go module proxy (testdata/kubectl; a few minutes the first time)")
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags",
		"-s -w -X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37",
		"-o", bin, ".")
	cmd.Dir, cmd.Stdout, cmd.Stderr = filepath.Join(root, "testdata", "kubectl"), os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build kubectl: %w", err)
	}
	return bin, nil
}

// machine describes where the benchmark ran.
func machine(ctx context.Context, b *bench) string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB memory", float64(kb)/(1<<20))
		}
	}
	kv := "kubectl"
	if b.noKubectl {
		kv = "kubectl not measured"
	} else if r, err := run(ctx, nil, b.kubectlBin, "version", "--client", "-o", "yaml"); err == nil {
		for _, line := range strings.Split(r.stdout, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "gitVersion: "); ok {
				kv = "kubectl " + v
				break
			}
		}
	}
	return fmt.Sprintf("Measured %s on %s, %d cores%s, %s/%s, %s, %s; API server: the harness "+
		"(kube-apiserver v1.37.2 + embedded etcd, fsync off, on loopback, sharing the same cores). "+
		"%sEvery figure is the median of %d runs (applies from empty and kubectl diff: %s) with the min–max spread.\n",
		time.Now().UTC().Format("2006-01-02"), cpu, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH,
		runtime.Version(), kv, nodesText(b), b.runs, heavyRunsText(b))
}

// nodesText says what the GPU nodes carry beside their labels, where it
// is more than a capacity (-kubelet-status).
func nodesText(b *bench) string {
	if !b.kubeletStatus {
		return ""
	}
	return "The GPU nodes carry the status a kubelet reports (`-kubelet-status`: conditions, addresses, nodeInfo, 50 images). "
}

func heavyRunsText(b *bench) string {
	if len(b.heavyRuns) == 0 {
		return "the same"
	}
	var parts []string
	for k, v := range b.heavyRuns {
		parts = append(parts, fmt.Sprintf("%d at size %s", v, k))
	}
	return strings.Join(parts, ", ") + ", else the same"
}

// Markers of the generated section in the -out file.
const (
	beginMarker = "<!-- bench:begin (written by `make bench`; do not edit) -->"
	endMarker   = "<!-- bench:end -->"
)

// writeSection replaces the text between the markers of path with report.
func writeSection(path, report string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	i, j := strings.Index(text, beginMarker), strings.Index(text, endMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no bench markers", path)
	}
	text = text[:i+len(beginMarker)] + "\n" + report + text[j:]
	return os.WriteFile(path, []byte(text), 0o644)
}
