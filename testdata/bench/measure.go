package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// result is one process run.
type result struct {
	wall           time.Duration
	maxRSS         int64         // bytes
	cpu            time.Duration // the command's user and system CPU
	server         time.Duration // the API server's CPU meanwhile (runGpuform)
	exit           int
	stdout, stderr string
}

// run runs name with args, measuring its wall time and peak RSS.
//
// The command is started through this program re-executed as a small
// parent (measureChild), which reports the command's peak RSS on file
// descriptor 3. Started directly, the RSS would be wrong: Go starts
// children with vfork, and Linux counts the parent's resident memory at the
// time of exec into the child's peak (so every command measured at least
// the bench's own RSS, which grows with the apply logs it reads).
func run(ctx context.Context, env []string, name string, args ...string) (result, error) {
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	rssR, rssW, err := os.Pipe()
	if err != nil {
		return result{}, err
	}
	defer rssR.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{measureChildArg, name}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = []*os.File{rssW}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		rssW.Close()
		return result{}, fmt.Errorf("run %s: %w", name, err)
	}
	rssW.Close()
	err = cmd.Wait()
	r := result{wall: time.Since(start), stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		return r, fmt.Errorf("run %s: %w", name, err)
	}
	rss, _ := io.ReadAll(rssR)
	var cpu int64
	if _, err := fmt.Sscan(string(rss), &r.maxRSS, &cpu); err == nil {
		r.cpu = time.Duration(cpu)
	} else if r.exit != measureChildFailed {
		return r, fmt.Errorf("run %s: no peak RSS reported (%q)", name, rss)
	}
	return r, nil
}

// measureChildArg, as the first argument, makes this program run the
// command that follows and report its peak RSS in bytes and its CPU time
// in nanoseconds on file descriptor 3 (see run).
const measureChildArg = "-measure-child"

// measureChildFailed is the exit code of measureChild when the command
// could not be started.
const measureChildFailed = 125

// measureChild runs args[0] with args[1:], passing standard input and
// output through, and returns its exit code after writing its peak RSS and
// CPU time (user and system) to file descriptor 3. The command is killed
// if this process dies.
func measureChild(args []string) int {
	report := os.NewFile(3, "rss")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return measureChildFailed
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Fprintln(report, ru.Maxrss*1024, ru.Utime.Nano()+ru.Stime.Nano())
	}
	return cmd.ProcessState.ExitCode()
}

// gpuform runs the gpuform binary of the working tree against s.
func (b *bench) gpuform(ctx context.Context, s *kubeapitest.Server, args ...string) (result, error) {
	return b.runGpuform(ctx, b.gpuformBin, s, args...)
}

// runGpuform runs the gpuform binary bin (this tree's or the baseline's)
// against s.
func (b *bench) runGpuform(ctx context.Context, bin string, s *kubeapitest.Server, args ...string) (result, error) {
	var r result
	var err error
	server := cpuDuring(s.PID(), func() {
		r, err = run(ctx, nil, bin, append([]string{"--kubeconfig", s.Kubeconfig, "--no-color"}, args...)...)
	})
	r.server = server
	return r, err
}

// cpuDuring runs f and returns the CPU time (user and system) process pid
// used meanwhile; 0 where it cannot be read.
func cpuDuring(pid int, f func()) time.Duration {
	before, ok := cpuTime(pid)
	f()
	after, ok2 := cpuTime(pid)
	if !ok || !ok2 {
		return 0
	}
	return after - before
}

// kubectl runs kubectl against s with a discovery cache of its own, so
// every run starts cold, as gpuform does.
func (b *bench) kubectl(ctx context.Context, s *kubeapitest.Server, args ...string) (result, error) {
	return run(ctx, []string{"KUBECACHEDIR=" + s.Dir + "/kubectl-cache"}, b.kubectlBin,
		append([]string{"--kubeconfig", s.Kubeconfig}, args...)...)
}

// requestLine matches the API request lines gpuform logs at -v 2:
// "api: GET https://127.0.0.1:port/path?query -> 200 OK in 3ms (...)".
var requestLine = regexp.MustCompile(`(?m)^api: ([A-Z]+) (\S+) -> `)

// request is one API request gpuform logged.
type request struct{ method, url string }

// requests returns the API requests of a gpuform run at -v 2.
func requests(stderr string) []request {
	var out []request
	for _, m := range requestLine.FindAllStringSubmatch(stderr, -1) {
		out = append(out, request{m[1], m[2]})
	}
	return out
}

// sample is repeated measurements of one quantity.
type sample []time.Duration

// median returns the median of s.
func (s sample) median() time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// spread returns "min–max" of s in seconds.
func (s sample) spread() string {
	if len(s) == 0 {
		return "–"
	}
	return fmt.Sprintf("%s–%s", secs(slices.Min(s)), secs(slices.Max(s)))
}

// secs formats d in seconds with two significant decimals.
func secs(d time.Duration) string {
	switch {
	case d >= 100*time.Second:
		return fmt.Sprintf("%.0f", d.Seconds())
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f", d.Seconds())
	default:
		return fmt.Sprintf("%.2f", d.Seconds())
	}
}

// trim shortens long process output for error messages.
func trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		return s[:1000] + "\n...\n" + s[len(s)-1000:]
	}
	return s
}

// serverOptions are the harness options of every cluster the benchmark
// starts: the API server's profiling endpoints on, for quiet's collection
// (and for profiling a run by hand), and its compaction of etcd's history
// off. The API server asks etcd to compact every five minutes, and the
// first compaction after an apply from empty (one revision per object)
// takes seconds of CPU on the cores gpuform shares with it, in the middle
// of whichever command is measured then. The benchmark's clusters live
// minutes; nothing it measures reads old revisions.
func serverOptions() kubeapitest.Options {
	return kubeapitest.Options{APIServerArgs: []string{"--profiling=true", "--etcd-compaction-interval=0"}}
}

// quiet has the API server of s collect its garbage (collect) and then
// waits until s is idle (settle), before a timed command: the harness's
// API server allocates several times the bytes it sends to serve a LIST
// and collects once its heap has doubled, which at size L happens every
// few plans; without a collection before each command, which of two
// commands in a row met the API server's collection, on the cores they
// share, would be decided by their order, the same in every round.
func (b *bench) quiet(ctx context.Context, s *kubeapitest.Server) {
	b.collectOn(ctx, s)
	settle(ctx, s.PID())
}

// collectOn has s's API server collect its garbage (collect); the first
// failure is logged and kept, and the command is measured without it.
func (b *bench) collectOn(ctx context.Context, s *kubeapitest.Server) {
	cfg, err := s.RESTConfig()
	if err == nil {
		err = collect(ctx, cfg)
	}
	if err != nil && b.collectErr == nil {
		b.collectErr = err
		b.logf("the API server's collection before each command failed (measured without it): %v", err)
	}
}

// collect has the API server at cfg collect its garbage: its heap profile
// asked with gc=1 runs a collection first (Go's net/http/pprof), and is
// answered once the collection ends.
func collect(ctx context.Context, cfg *rest.Config) error {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("collect: GET /debug/pprof/heap?gc=1: %s", resp.Status)
	}
	return nil
}

// settleMax is the longest settle waits: at size L the controllers' work
// after an apply (quota status, the garbage collector's graph) can
// outlast a minute.
const settleMax = 3 * time.Minute

// idleSeconds is how many seconds in a row settle wants the harness idle:
// the controllers' work after an apply or a restart (a quota's status, the
// garbage collector's graph) comes in waves, and a single idle second can
// fall between two of them.
const idleSeconds = 3

// settle waits until the process pid has used less than 10% of a core in
// each of idleSeconds seconds in a row (at most settleMax), so that the
// controllers' work after an apply (quota status, service accounts, CA
// bundles in every new namespace) is not measured as part of the next
// command; it returns how long it waited.
func settle(ctx context.Context, pid int) time.Duration {
	start := time.Now()
	prev, ok := cpuTime(pid)
	idle := 0
	for ok && idle < idleSeconds && time.Since(start) < settleMax {
		select {
		case <-ctx.Done():
			return time.Since(start)
		case <-time.After(time.Second):
		}
		cur, ok2 := cpuTime(pid)
		if !ok2 {
			break
		}
		if cur-prev < 100*time.Millisecond {
			idle++
		} else {
			idle = 0
		}
		prev = cur
	}
	return time.Since(start)
}

// cpuTime is the user and system CPU time process pid has used so far
// (/proc/PID/stat; clock ticks of 10 ms); ok is false where it cannot be read.
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}
