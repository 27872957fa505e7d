package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/providers/kubernetes"
)

// 50 plans at once against the API server all finish, each with exactly
// the output of a single plan.
func TestLoadConcurrentPlans(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "loadplan", 5)
	want := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode")
	if want.code != 2 || !strings.Contains(want.stdout, "Plan: ") {
		t.Fatalf("single plan: exit %d\n%s%s", want.code, want.stdout, want.stderr)
	}
	const n = 50
	results := make([]result, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() { results[i] = runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode") })
	}
	wg.Wait()
	elapsed := time.Since(start)
	for i, r := range results {
		if r.code != 2 || r.stdout != want.stdout || r.stderr != "" {
			t.Errorf("plan %d of %d: exit %d, stdout equal %v, stderr:\n%s", i, n, r.code, r.stdout == want.stdout, r.stderr)
		}
	}
	t.Logf("%d concurrent plans took %s", n, elapsed.Round(time.Millisecond))
}

// window is when one apply held the stack's lock (its first write of the
// Lease the API server accepted, a create or a takeover, and its last, the
// release) and when it wrote anything else.
type window struct {
	name                     string
	locked, unlocked         time.Time
	firstWrite, lastWrite    time.Time
	writes                   int
	leaseCreates, leaseFails int
}

// windowRecorder times one run's requests.
type windowRecorder struct {
	mu sync.Mutex
	w  window
}

func (r *windowRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTrip(func(req *http.Request) (*http.Response, error) {
		sent := time.Now()
		resp, err := rt.RoundTrip(req)
		answered := time.Now()
		a, ok := requestAccess(req.Method, req.URL)
		if !ok || err != nil {
			return resp, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case a.resource == "leases" && (a.verb == "create" || a.verb == "update") && resp.StatusCode < 300:
			if r.w.leaseCreates == 0 {
				r.w.locked = answered
				r.w.leaseCreates++
			}
			r.w.unlocked = sent // renewals, then the release
		case a.resource == "leases" && (a.verb == "create" || a.verb == "update"):
			r.w.leaseFails++
		case a.verb == "get" || a.verb == "list" || a.verb == "watch" || a.resource == "leases" || a.resource == "namespaces" && a.verb == "create":
		default:
			if r.w.writes == 0 {
				r.w.firstWrite = sent
			}
			r.w.lastWrite = answered
			r.w.writes++
		}
		return resp, err
	})
}

// An apply holding the lock while 20 others queue with --lock-timeout:
// never do two hold it at once. Each queued apply either takes the lock
// after the one before released it and applies its own change, or, with a
// lock timeout shorter than the holder's hold, fails with the lock error
// and writes nothing. Proved with the time the API server granted and
// released each Lease and the time of every other write.
func TestLoadLockQueue(t *testing.T) {
	setupCluster(t)
	const stack = "lockq"
	dir := tenantsConfig(t, stack, 1)
	path := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every queued apply sets its own CPU quota: each has a change to make.
	text := strings.Replace(string(src), "  protect          = false\n", "  protect          = false\n  cpu              = var.cpu\n", 1) + "\nvariable \"cpu\" {\n  type = string\n}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	applyOK(t, nil, dir, "--var", "cpu=100")

	client, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	holderLock, err := client.Lock(ctx, stack, kubernetes.LockOptions{Holder: "load-test holder"})
	if err != nil {
		t.Fatal(err)
	}
	holder := window{name: "holder", locked: time.Now()}

	const queued, impatient = 20, 5 // the first 5 wait 1s only
	const hold = 3 * time.Second
	recs := make([]*windowRecorder, queued)
	results := make([]result, queued)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range queued {
		recs[i] = &windowRecorder{w: window{name: fmt.Sprintf("apply %d", i)}}
		timeout := "60s"
		if i < impatient {
			timeout = "1s"
		}
		wg.Go(func() {
			var out, errb bytes.Buffer
			cmd := newRoot(&globals{stdout: &out, stderr: &errb, wrapTransport: recs[i].wrap})
			cmd.SetArgs([]string{"--kubeconfig", srv.Kubeconfig, "--no-color", "--chdir", dir, "apply", "--auto-approve",
				"--lock-timeout", timeout, "--var", fmt.Sprintf("cpu=%d", 200+i)})
			err := cmd.ExecuteContext(ctx)
			results[i] = toResult(out.String(), errb.String(), err)
		})
	}
	time.Sleep(hold)
	holder.unlocked = time.Now()
	if err := holderLock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	elapsed := time.Since(start)

	windows := []window{holder}
	for i, r := range results {
		w := recs[i].w
		switch {
		case i < impatient:
			if r.code != 1 || !strings.Contains(r.stderr, "Error acquiring the state lock") || !strings.Contains(r.stderr, "load-test holder") {
				t.Errorf("%s (--lock-timeout 1s): exit %d, want the lock error naming the holder\n%s%s", w.name, r.code, r.stdout, r.stderr)
			}
			if w.writes > 0 || w.leaseCreates > 0 {
				t.Errorf("%s timed out but wrote %d objects and took %d Leases", w.name, w.writes, w.leaseCreates)
			}
		default:
			if r.code != 0 || !strings.Contains(r.stdout, "Apply complete! Resources: 0 added, 1 changed, 0 destroyed.") {
				t.Errorf("%s: exit %d, want its one change applied\n%s%s", w.name, r.code, r.stdout, r.stderr)
				continue
			}
			if w.leaseCreates != 1 || w.locked.IsZero() || w.unlocked.IsZero() {
				t.Errorf("%s: %d Leases taken, locked %v, unlocked %v", w.name, w.leaseCreates, w.locked, w.unlocked)
				continue
			}
			if !w.locked.After(holder.unlocked) {
				t.Errorf("%s took the lock at %s, before the holder released it at %s", w.name, w.locked.Format(time.StampMicro), holder.unlocked.Format(time.StampMicro))
			}
			if w.writes == 0 || w.firstWrite.Before(w.locked) || w.lastWrite.After(w.unlocked) {
				t.Errorf("%s wrote %d times from %s to %s, outside its lock %s to %s", w.name, w.writes,
					w.firstWrite.Format(time.StampMicro), w.lastWrite.Format(time.StampMicro), w.locked.Format(time.StampMicro), w.unlocked.Format(time.StampMicro))
			}
			windows = append(windows, w)
		}
	}
	// No two lock windows overlap: sorted by start, each ends before the
	// next begins.
	sort.Slice(windows, func(i, j int) bool { return windows[i].locked.Before(windows[j].locked) })
	for i := 1; i < len(windows); i++ {
		if !windows[i-1].unlocked.Before(windows[i].locked) {
			t.Errorf("%s (lock %s to %s) and %s (lock from %s) held the lock at once", windows[i-1].name,
				windows[i-1].locked.Format(time.StampMicro), windows[i-1].unlocked.Format(time.StampMicro), windows[i].name, windows[i].locked.Format(time.StampMicro))
		}
	}
	if len(windows) != queued-impatient+1 {
		t.Errorf("%d lock windows, want %d", len(windows), queued-impatient+1)
	}
	// The last apply's quota is what the cluster has: nothing was lost.
	last := windows[len(windows)-1]
	var lastCPU string
	for i := range recs {
		if recs[i].w.name == last.name {
			lastCPU = fmt.Sprint(200 + i)
		}
	}
	q, err := clientset(t).CoreV1().ResourceQuotas(stack+"-0000").Get(ctx, "gpuform", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Spec.Hard["requests.cpu"]; got.String() != lastCPU {
		t.Errorf("the quota's cpu is %s, want %s from the last apply to hold the lock (%s)", got.String(), lastCPU, last.name)
	}
	t.Logf("%d queued applies (%d with a 1s lock timeout) behind a %s hold took %s; %d lock windows, none overlapping", queued, impatient, hold, elapsed.Round(time.Millisecond), len(windows))
}
