package main

import (
	"os"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listURLs keeps the LISTs a plan made and drops discovery and later pages.
func TestListURLs(t *testing.T) {
	reqs := []request{
		{method: "GET", url: "https://127.0.0.1:1/api?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/apis?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/api/v1?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/apis/kueue.x-k8s.io/v1beta2?timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/api/v1/namespaces?labelSelector=gpuform.dev%2Fstack%3Dlarge&timeout=1m0s"},
		{method: "GET", url: "https://127.0.0.1:1/apis/serving.kserve.io/v1beta1/inferenceservices?labelSelector=x&limit=500"},
		{method: "GET", url: "https://127.0.0.1:1/apis/serving.kserve.io/v1beta1/inferenceservices?continue=abc&labelSelector=x&limit=500"},
		{method: "PATCH", url: "https://127.0.0.1:1/api/v1/namespaces/a"},
	}
	want := []string{
		"https://127.0.0.1:1/api/v1/namespaces?labelSelector=gpuform.dev%2Fstack%3Dlarge&timeout=1m0s",
		"https://127.0.0.1:1/apis/serving.kserve.io/v1beta1/inferenceservices?labelSelector=x&limit=500",
	}
	if got := listURLs(reqs); !reflect.DeepEqual(got, want) {
		t.Errorf("listURLs = %q, want %q", got, want)
	}
}

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == measureChildArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// run reports the command's own peak RSS, exit code and output, not the
// RSS of the process that started it (which vfork would count).
func TestRunMeasuresTheChild(t *testing.T) {
	ballast := make([]byte, 300<<20)
	for i := range ballast {
		if i%4096 == 0 {
			ballast[i] = 1
		}
	}
	r, err := run(t.Context(), nil, "/bin/sh", "-c", "echo out; echo err >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if r.exit != 3 || r.stdout != "out\n" || r.stderr != "err\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.exit, r.stdout, r.stderr)
	}
	if r.maxRSS <= 0 || r.maxRSS > 100<<20 {
		t.Errorf("peak RSS of sh is %d MB, want (0, 100] MB with the parent holding %d MB", r.maxRSS>>20, len(ballast)>>20)
	}
	runtime.KeepAlive(ballast)
	// The command's CPU is its own: a busy shell loop uses a good part of a
	// second of CPU (however long a loaded machine takes to give it), never
	// more than its wall time.
	r, err = run(t.Context(), nil, "/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err != nil {
		t.Fatal(err)
	}
	if r.cpu < 50*time.Millisecond || r.cpu > r.wall+50*time.Millisecond {
		t.Errorf("a busy loop of %s reported %s of CPU", r.wall, r.cpu)
	}
}

// A drift fits the container when its peak RSS is at most the container's
// limit, and an unmeasured one never does.
func TestFitsPod(t *testing.T) {
	for _, c := range []struct {
		rss  int64
		want string
	}{{300 << 20, "yes"}, {podMemory, "yes"}, {podMemory + 1, "no"}, {0, "no"}} {
		if got := fitsPod(c.rss); got != c.want {
			t.Errorf("fitsPod(%d) = %s, want %s", c.rss, got, c.want)
		}
	}
}

// Drift's table is there only when drift was measured, one row per size.
func TestDriftTable(t *testing.T) {
	r := sizeM()
	r.driftPodRSS = 300 << 20
	got := table([]*sizeResult{r})
	want := "\n#### Drift in a 768 MiB container (GOMEMLIMIT=627MiB, what gpuform sets there)\n\n| size | objects | drift peak RSS | fits |\n|---|---:|---:|---|\n| M | 10516 | 300 MB | yes |\n"
	if !strings.Contains(got, want) {
		t.Errorf("table lacks the drift row %q:\n%s", want, got)
	}
}

// cpuDuring gives the CPU a process used while the function ran, and 0
// for a process it cannot read.
func TestCPUDuring(t *testing.T) {
	// spin uses 200 ms of CPU, however long a busy machine takes to give it.
	spin := func() {
		start := selfCPU(t)
		for selfCPU(t)-start < 200*time.Millisecond {
		}
	}
	if got := cpuDuring(os.Getpid(), spin); got < 100*time.Millisecond || got > 5*time.Second {
		t.Errorf("200 ms of CPU spinning: cpuDuring = %s", got)
	}
	if got := cpuDuring(-1, spin); got != 0 {
		t.Errorf("no such process: cpuDuring = %s, want 0", got)
	}
}

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The CPU bound is the load's wall time plus the CPU after it, the plan's
// and the API server's, shared by the cores.
func TestCPUBound(t *testing.T) {
	for _, c := range []struct {
		load, after, server time.Duration
		cores               int
		want                time.Duration
	}{
		{2800 * time.Millisecond, 4 * time.Second, 2 * time.Second, 2, 5800 * time.Millisecond},
		{600 * time.Millisecond, 900 * time.Millisecond, 500 * time.Millisecond, 1, 2 * time.Second},
		{time.Second, 2 * time.Second, 2 * time.Second, 4, 2 * time.Second},
		{time.Second, time.Second, time.Second, 0, 3 * time.Second},
	} {
		if got := cpuBound(c.load, c.after, c.server, c.cores); got != c.want {
			t.Errorf("cpuBound(%s, %s, %s, %d) = %s, want %s", c.load, c.after, c.server, c.cores, got, c.want)
		}
	}
}

// The bound's table is there only when the bound was measured, one row
// per size, its ratio the plan's median over the bound's.
func TestBoundTable(t *testing.T) {
	if got := table([]*sizeResult{sizeM()}); strings.Contains(got, "CPU bound") {
		t.Errorf("a result without the bound has its table:\n%s", got)
	}
	r := sizeM()
	r.afterLoad, r.server, r.bound = ms(900, 800, 1000), ms(500), ms(1300, 1250, 1400)
	got := table([]*sizeResult{r})
	want := "| M | 10516 | 1.95 (1.80–2.43) | 0.88 (0.87–0.90) | 0.90 (0.80–1.00) | 0.50 (1 run) | 1.30 (1.25–1.40) | 1.50x |\n"
	if !strings.Contains(got, want) {
		t.Errorf("table lacks the bound row %q:\n%s", want, got)
	}
}
