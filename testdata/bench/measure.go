package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// result is one process run.
type result struct {
	wall           time.Duration
	maxRSS         int64 // bytes
	exit           int
	stdout, stderr string
}

// run runs name with args, measuring its wall time and peak RSS.
func run(ctx context.Context, env []string, name string, args ...string) (result, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start), stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		return r, fmt.Errorf("run %s: %w", name, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024
	}
	return r, nil
}

// gpuform runs the gpuform binary against s.
func (b *bench) gpuform(ctx context.Context, s *kubeapitest.Server, args ...string) (result, error) {
	return run(ctx, nil, b.gpuformBin, append([]string{"--kubeconfig", s.Kubeconfig, "--no-color"}, args...)...)
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

// settle waits until the process pid has used less than 10% of a core for
// a whole second (at most a minute), so that the controllers' work after an
// apply (quota status, service accounts, CA bundles in every new namespace)
// is not measured as part of the next command; it returns how long it waited.
func settle(ctx context.Context, pid int) time.Duration {
	start := time.Now()
	prev, ok := cpuTime(pid)
	for ok && time.Since(start) < time.Minute {
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
			break
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
