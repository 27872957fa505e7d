package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// timedWrite is one write (PATCH or DELETE of anything but the lock) a run
// sent: when it left and when its answer came.
type timedWrite struct {
	sent, answered time.Time
	path           string
}

// writeLog records one in-process run's writes; each write waits slow
// before it is sent, so that an apply of a few hundred objects takes
// seconds.
type writeLog struct {
	slow   time.Duration
	mu     sync.Mutex
	writes []timedWrite
}

func (w *writeLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTrip(func(req *http.Request) (*http.Response, error) {
		write := (req.Method == http.MethodPatch || req.Method == http.MethodDelete) && !strings.Contains(req.URL.Path, "/leases/")
		if !write {
			return rt.RoundTrip(req)
		}
		select {
		case <-time.After(w.slow):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		sent := time.Now()
		resp, err := rt.RoundTrip(req)
		w.mu.Lock()
		w.writes = append(w.writes, timedWrite{sent: sent, answered: time.Now(), path: req.URL.Path})
		w.mu.Unlock()
		return resp, err
	})
}

// log returns the writes so far.
func (w *writeLog) log() []timedWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]timedWrite(nil), w.writes...)
}

// runLogged runs gpuform in-process against the test server with its
// writes recorded in w.
func runLogged(w *writeLog, args ...string) result {
	var out, errb bytes.Buffer
	cmd := newRoot(&globals{stdout: &out, stderr: &errb, wrapTransport: w.wrap})
	cmd.SetArgs(append([]string{"--kubeconfig", srv.Kubeconfig, "--no-color"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return toResult(out.String(), errb.String(), err)
}

var lostAccountRE = regexp.MustCompile(`Error: Apply stopped: lost the lock of stack fenced \(lock ID [0-9a-f]+\): its Lease was (?:deleted|taken by) [^\n]*: (\d+) applied \((\d+) added, \d+ changed, \d+ destroyed\), (\d+) failed, (\d+) skipped\.`)

// The lock is a fence. An apply is writing a few hundred objects, slowly,
// when its Lease is deleted (gpuform force-unlock, or by hand), and a second
// apply of another configuration of the stack starts at once. The first
// notices at its next renewal, a second later (the Lease gone, or already
// the second apply's): it stops writing, cuts what is in flight, reports
// what was applied, failed and skipped and exits 1 with "lost the lock". The second took a Lease its last holder did not
// release, so it writes only once the fence interval (3s) passed: its first
// write comes after the first apply's last answer, and the stack ends up
// exactly the second configuration. (With renewals 10s apart the first
// apply never noticed, and both wrote at once.)
func TestLockLostMidApply(t *testing.T) {
	setupCluster(t)
	const stack = "fenced"
	dir := tenantsConfig(t, stack, 60)
	path := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The two applies differ in every tenant's CPU quota.
	text := strings.Replace(string(src), "  protect          = false\n", "  protect          = false\n  cpu              = var.cpu\n", 1) + "\nvariable \"cpu\" {\n  type = string\n}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	leases := clientset(t).CoordinationV1().Leases(kube.LockNamespace)

	first := &writeLog{slow: 50 * time.Millisecond}
	done := make(chan result, 1)
	go func() {
		done <- runLogged(first, "--chdir", dir, "apply", "--auto-approve", "--parallelism", "2", "--var", "cpu=100")
	}()
	// One second into its writes, the first apply's Lease is deleted.
	deadline := time.Now().Add(60 * time.Second)
	for len(first.log()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first apply never wrote")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if err := leases.Delete(kubeapitest.Context(t), kube.LockName(stack), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	before := len(first.log())

	second := &writeLog{}
	r2 := runLogged(second, "--chdir", dir, "apply", "--auto-approve", "--var", "cpu=200")
	r1 := <-done
	if r1.code != 1 {
		t.Errorf("the first apply, its lock deleted: exit %d, want 1\n%s\n%s", r1.code, lastLines(r1.stdout, 3), lastLines(r1.stderr, 3))
	} else {
		plan := atoiMatch(t, planAddRE, r1.stdout)
		acct := atoiMatch(t, lostAccountRE, r1.stderr)
		if acct[0]+acct[2]+acct[3] != plan[0]+plan[1] || acct[3] == 0 {
			t.Errorf("account %d applied, %d failed, %d skipped; want the %d planned changes, some skipped", acct[0], acct[2], acct[3], plan[0]+plan[1])
		}
		if !strings.Contains(r1.stderr, "Error: lost the lock of stack fenced") {
			t.Errorf("the first apply did not say when it lost the lock:\n%s", r1.stderr)
		}
	}
	w1 := first.log()
	last := w1[len(w1)-1]
	for _, w := range w1 {
		if w.answered.After(last.answered) {
			last = w
		}
	}
	t.Logf("first apply: %d writes, %d before the Lease was deleted, the last sent %s and answered %s after the deletion",
		len(w1), before, last.sent.Sub(deleted).Round(time.Millisecond), last.answered.Sub(deleted).Round(time.Millisecond))
	if after := last.sent.Sub(deleted); after > 2*time.Second {
		t.Errorf("the first apply still wrote %s after its Lease was deleted (%s), want within 2s", after, last.path)
	}

	if r2.code != 0 {
		t.Fatalf("the second apply: exit %d\n%s\n%s", r2.code, lastLines(r2.stdout, 5), r2.stderr)
	}
	w2 := second.log()
	if len(w2) == 0 {
		t.Fatal("the second apply wrote nothing")
	}
	firstOf2 := w2[0]
	for _, w := range w2 {
		if w.sent.Before(firstOf2.sent) {
			firstOf2 = w
		}
	}
	t.Logf("second apply: %d writes, the first sent %s after the deletion", len(w2), firstOf2.sent.Sub(deleted).Round(time.Millisecond))
	if !firstOf2.sent.After(last.answered) {
		t.Errorf("the applies overlapped: the second wrote %s at %s, before the first's last write (%s) was answered at %s",
			firstOf2.path, firstOf2.sent.Format(time.StampMicro), last.path, last.answered.Format(time.StampMicro))
	}

	// The stack is the second configuration, all of it.
	if r := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode", "--var", "cpu=200"); r.code != 0 {
		t.Errorf("plan of the second configuration after both applies: exit %d, want 0 (no changes)\n%s", r.code, lastLines(r.stdout, 30))
	}
	if n := countObjects(t, stack); n["Namespace"] != 60 || n["ResourceQuota"] != 60 {
		t.Errorf("objects after both applies: %v", n)
	}
	if h := lockHolder(t, stack); h != "" {
		t.Errorf("the lock after the second apply is held by %s; want it released", h)
	}
}

// lockHolder returns who holds the stack's lock, "" when it is free: its
// Lease released (kept without a holder) or gone.
func lockHolder(t *testing.T, stack string) string {
	t.Helper()
	l, err := clientset(t).CoordinationV1().Leases(kube.LockNamespace).Get(kubeapitest.Context(t), kube.LockName(stack), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ""
	case err != nil:
		t.Fatal(err)
	case l.Spec.HolderIdentity != nil:
		return *l.Spec.HolderIdentity
	}
	return ""
}
