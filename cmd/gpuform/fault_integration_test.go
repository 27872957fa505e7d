package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/faultproxy"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// newFaultProxy starts a fault proxy in front of s and writes a kubeconfig
// for gpuform that points at it. The proxy trusts s's CA and has no
// credentials of its own: gpuform's bearer token (from s's token
// kubeconfig) passes through, so the server sees gpuform's identity.
func newFaultProxy(t *testing.T, s *kubeapitest.Server) (*faultproxy.Proxy, string) {
	t.Helper()
	admin, err := s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	upstream := &rest.Config{Host: admin.Host, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	p, err := faultproxy.New(upstream, faultproxy.Options{Seed: uint64(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	tok, err := clientcmd.LoadFromFile(s.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	user := tok.AuthInfos[tok.Contexts[tok.CurrentContext].AuthInfo]
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := p.WriteKubeconfig(path, user); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// via runs gpuform in-process with the kubeconfig kc.
func via(t *testing.T, kc string, args ...string) result {
	t.Helper()
	return runWith(t, nil, append([]string{"--kubeconfig", kc}, args...)...)
}

var (
	planAddRE  = regexp.MustCompile(`Plan: (\d+) to add, (\d+) to change`)
	accountRE  = regexp.MustCompile(`Error: Apply [^\n]*?: (\d+) applied \((\d+) added, \d+ changed, \d+ destroyed\), (\d+) failed, (\d+) skipped\.`)
	completeRE = regexp.MustCompile(`Apply complete! Resources: (\d+) added, (\d+) changed`)
	lockIDRE   = regexp.MustCompile(`run gpuform force-unlock ([0-9a-f]+) if the lock stays`)
)

// atoiMatch returns the numbered submatches of re in s as ints, failing
// the test when re does not match.
func atoiMatch(t *testing.T, re *regexp.Regexp, s string) []int {
	t.Helper()
	m := re.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %q in:\n%s", re, s)
	}
	out := make([]int, len(m)-1)
	for i, v := range m[1:] {
		out[i], _ = strconv.Atoi(v)
	}
	return out
}

// byPath groups the proxy's log by method and path.
func byPath(log []faultproxy.Entry, method string) map[string][]faultproxy.Entry {
	out := map[string][]faultproxy.Entry{}
	for _, e := range log {
		if e.Method == method {
			out[e.Path] = append(out[e.Path], e)
		}
	}
	return out
}

func TestFaultTransientErrorsConverge(t *testing.T) {
	setupCluster(t)
	transient := []faultproxy.Fault{
		{Kind: faultproxy.Status, Code: 429, RetryAfter: time.Second},
		{Kind: faultproxy.Status, Code: 500},
		{Kind: faultproxy.Status, Code: 503},
		{Kind: faultproxy.Reset},
	}
	leases := regexp.MustCompile(`/leases/`)
	// The lock's requests have a rule of their own; the dry-run probes
	// that prove the admission policies enforced retry with their own
	// backoff (engine TestAccessRefusedWhenNotEnforced), and faulting them
	// too only stretches the apply while the lock's renewals are faulted.
	notFaulted := regexp.MustCompile(`/leases/|dryRun=All`)
	tests := []struct {
		name  string
		stack string
		// rules are the proxy's, tried in order; the first names the case.
		rules []faultproxy.Rule
	}{
		// 30% of every request (reads, writes, the lock) fail; at most 3 in
		// a row for one request, as a transient fault clears. The lock's
		// renewals fail as often but never twice in a row: a renewal is
		// due a second after the last, and the lock is lost when none is
		// accepted for 3 s (the fence), so three faults in a row on a
		// machine busy enough to answer each in 0.4 s lose it, as they
		// should (CI's run of the whole suite did once).
		{"30% of requests fail with 429, 500, 503 or a reset", "flaky", []faultproxy.Rule{
			{Name: "transient", ExceptPath: notFaulted, Probability: 0.3, MaxInARow: 3, Faults: transient},
			{Name: "transient-lock", Path: leases, Probability: 0.3, MaxInARow: 1, Faults: transient},
		}},
		// The server applies the write but the answer never arrives: gpuform
		// sends it again, and server-side apply makes the repeat a no-op.
		{"30% of writes are applied but their answer is lost", "lostans", []faultproxy.Rule{
			{Name: "lost", Methods: []string{"PATCH"}, Probability: 0.3, MaxInARow: 2, Faults: []faultproxy.Fault{{Kind: faultproxy.LoseResponse}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenantsConfig(t, tt.stack, 20)
			p, kc := newFaultProxy(t, srv)
			for _, rule := range tt.rules {
				p.AddRule(rule)
			}
			start := time.Now()
			r := via(t, kc, "--chdir", dir, "apply", "--auto-approve")
			elapsed := time.Since(start)
			if r.code != 0 {
				t.Fatalf("apply through the faults: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			plan := atoiMatch(t, planAddRE, r.stdout)
			if got := atoiMatch(t, completeRE, r.stdout)[0]; got != plan[0] {
				t.Errorf("added %d, planned %d", got, plan[0])
			}
			want := plan[0] + plan[1] // one write per object and per labelled Node
			log := p.Log()
			injected := 0
			for _, rule := range tt.rules {
				injected += p.Injected(rule.Name)
			}
			t.Logf("%d requests, %d faults injected, apply took %s", len(log), injected, elapsed.Round(time.Millisecond))
			if injected == 0 {
				t.Fatal("no fault was injected")
			}

			patches := byPath(log, "PATCH")
			// Besides the objects, the stack's inventory: announced before
			// the walk, recorded after it (a shard each).
			inventory := 0
			for path := range patches {
				if strings.Contains(path, "/namespaces/"+engine.LockNamespace+"/configmaps/gpuform-inventory-") {
					delete(patches, path)
					inventory++
				}
			}
			if inventory != 2 {
				t.Errorf("%d inventory shards were written, want 2", inventory)
			}
			if len(patches) != want {
				t.Errorf("%d objects were written, want %d", len(patches), want)
			}
			kinds := map[string]int{}
			for path, es := range patches {
				var rvs []string
				for i, e := range es {
					if e.Rule != "" {
						kinds[e.Fault.Kind.String()+strconv.Itoa(e.Fault.Code)]++
					}
					if e.Upstream/100 == 2 {
						rvs = append(rvs, e.ResourceVersion)
					}
					if e.Rule == "" || i+1 == len(es) || e.Fault.Kind == faultproxy.LoseResponse {
						// After a lost answer to a Node write, gpuform finds
						// the Node moved (by its own write) and applies
						// again at once with the new resourceVersion.
						continue
					}
					// The next try of a failed write waits for the backoff
					// (at least 200ms), or for Retry-After when sent.
					gap, min := es[i+1].Time.Sub(e.Time), 200*time.Millisecond
					if e.Fault.RetryAfter > 0 {
						min = e.Fault.RetryAfter
					}
					if gap < min {
						t.Errorf("%s: retried %s after a %s %d, want at least %s", path, gap, e.Fault.Kind, e.Fault.Code, min)
					}
				}
				switch {
				case tt.rules[0].Name == "transient" && len(rvs) != 1:
					t.Errorf("%s was written %d times, want once", path, len(rvs))
				case len(rvs) == 0:
					t.Errorf("%s never reached the server", path)
				}
				if strings.Contains(path, "/resourcequotas/") {
					continue // the quota controller writes their status meanwhile
				}
				for _, rv := range rvs[1:] {
					if rv != rvs[0] {
						t.Errorf("%s: a repeated write changed the object (resourceVersion %s, then %s)", path, rvs[0], rv)
					}
				}
			}
			t.Logf("faults on writes by kind: %v", kinds)
			if tt.rules[0].Name == "transient" {
				// About 150 requests at 0.3: one standard deviation is about
				// 0.04, so 0.15 to 0.45 (four of them) holds for a working
				// proxy; 0.2 to 0.4 failed one run in a few hundred (0.19).
				// Of the requests the rules may fault (not the probes).
				faultable := 0
				for _, e := range log {
					if !strings.Contains(e.Path, "dryRun=All") {
						faultable++
					}
				}
				frac := float64(injected) / float64(faultable)
				if frac < 0.15 || frac > 0.45 {
					t.Errorf("%.2f of requests failed, want about 0.3", frac)
				}
				if kinds["status429"] == 0 {
					t.Error("no write got a 429: Retry-After was not exercised")
				}
			}

			// The next plan, through the same faults, finds nothing to do.
			if r := via(t, kc, "--chdir", dir, "plan", "--detailed-exitcode"); r.code != 0 {
				t.Fatalf("plan after the apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if n := countObjects(t, tt.stack); n["Namespace"] != 20 || n["ResourceQuota"] != 20 || n["RoleBinding"] != 20 {
				t.Errorf("objects after the apply: %v, want exactly 20 of each", n)
			}
		})
	}
}

// stackRecord matches the paths in gpuform-system, where apply keeps the
// stack's record: its writes are not changes of the plan, and the faults
// of these tests are for the plan's writes.
var stackRecord = regexp.MustCompile(`/namespaces/gpuform-system/`)

func TestFaultServerGone(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "gone", 40)
	p, kc := newFaultProxy(t, srv)
	// The first 30 writes go through; then the server is gone for good.
	p.AddRule(faultproxy.Rule{Name: "die", Methods: []string{"PATCH"}, ExceptPath: stackRecord, Skip: 30, Faults: []faultproxy.Fault{{Kind: faultproxy.GoneForGood}}})
	const timeout = 90 * time.Second
	start := time.Now()
	r := via(t, kc, "--chdir", dir, "apply", "--auto-approve", "--timeout", timeout.String())
	elapsed := time.Since(start)
	t.Logf("apply stopped %s after it started; %d connections refused", elapsed.Round(time.Millisecond), p.RefusedConnections())
	if r.code != 1 {
		t.Fatalf("apply against a server gone for good: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if elapsed >= timeout {
		t.Errorf("apply took %s, not within its --timeout %s", elapsed, timeout)
	}
	plan := atoiMatch(t, planAddRE, r.stdout)
	total := plan[0] + plan[1]
	acct := atoiMatch(t, accountRE, r.stderr)
	applied, failed, skipped := acct[0], acct[2], acct[3]
	if applied+failed+skipped != total {
		t.Errorf("account %d applied + %d failed + %d skipped, want the %d planned changes", applied, failed, skipped, total)
	}
	ok := 0
	for _, e := range p.Log() {
		if e.Method == "PATCH" && e.Upstream/100 == 2 && !stackRecord.MatchString(e.Path) {
			ok++
		}
	}
	if applied != 30 || ok != 30 {
		t.Errorf("the account says %d applied and the server accepted %d writes; want 30 and 30", applied, ok)
	}
	for _, want := range []string{"the API server looks unavailable", "failed   ", "skipped  "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the account lacks %q:\n%s", want, r.stderr)
		}
	}
	id := lockIDRE.FindStringSubmatch(r.stderr)
	if id == nil {
		t.Fatalf("no advice to force-unlock the lock that could not be released:\n%s", r.stderr)
	}

	// The server is back: clear the dead run's lock and apply again. It adds
	// exactly what the account said was not applied.
	p.SetGone(false)
	p.ClearRules()
	if r := via(t, kc, "--chdir", dir, "force-unlock", id[1]); r.code != 0 {
		t.Fatalf("force-unlock %s: exit %d\n%s", id[1], r.code, r.stderr)
	}
	r = via(t, kc, "--chdir", dir, "apply", "--auto-approve")
	if r.code != 0 {
		t.Fatalf("apply after the server came back: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := atoiMatch(t, completeRE, r.stdout); got[0]+got[1] != failed+skipped {
		t.Errorf("the rerun added %d and changed %d, but the account said %d failed and %d skipped", got[0], got[1], failed, skipped)
	}
	if r := via(t, kc, "--chdir", dir, "plan", "--detailed-exitcode"); r.code != 0 {
		t.Errorf("plan after converging: exit %d\n%s", r.code, r.stdout)
	}
}

func TestFaultTimeout(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "hung", 5)
	p, kc := newFaultProxy(t, srv)
	tests := []struct {
		name    string
		rule    faultproxy.Rule
		args    []string
		timeout time.Duration
		want    []string
	}{
		{
			name:    "apply: the server hangs on every write",
			rule:    faultproxy.Rule{Name: "hang", Methods: []string{"PATCH"}, ExceptPath: stackRecord, Faults: []faultproxy.Fault{{Kind: faultproxy.Delay, Delay: time.Hour}}},
			args:    []string{"apply", "--auto-approve", "--parallelism", "2"},
			timeout: 6 * time.Second,
			want:    []string{"Error: Apply stopped: the run exceeded --timeout 6s", "may or may not have been applied", "interrupted before it started (the run exceeded --timeout 6s)"},
		},
		{
			name:    "plan: the server hangs on a list",
			rule:    faultproxy.Rule{Name: "hang", Methods: []string{"GET"}, Path: regexp.MustCompile(`/namespaces\?.*labelSelector`), Faults: []faultproxy.Fault{{Kind: faultproxy.Delay, Delay: time.Hour}}},
			args:    []string{"plan"},
			timeout: 4 * time.Second,
			want:    []string{"list Namespaces: the Kubernetes API server at", "did not answer in time", "gpuform stopped: the run exceeded --timeout 4s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.ClearRules()
			p.AddRule(tt.rule)
			start := time.Now()
			r := via(t, kc, append([]string{"--chdir", dir, "--timeout", tt.timeout.String()}, tt.args...)...)
			elapsed := time.Since(start)
			t.Logf("stopped %s after it started, with --timeout %s", elapsed.Round(time.Millisecond), tt.timeout)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if p.Injected("hang") == 0 {
				t.Fatal("no request hung: the test proves nothing")
			}
			// The deadline, plus the 0.5s a request in flight may still run,
			// plus releasing the lock.
			if elapsed < tt.timeout || elapsed > tt.timeout+2*time.Second {
				t.Errorf("stopped after %s with --timeout %s", elapsed, tt.timeout)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if h := lockHolder(t, "hung"); h != "" {
				t.Errorf("the lock is still held by %s after the timeout", h)
			}
		})
	}
	p.ClearRules()
	if r := via(t, kc, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply once the server answers: exit %d\n%s", r.code, r.stderr)
	}
	if r := via(t, kc, "--chdir", dir, "plan", "--detailed-exitcode"); r.code != 0 {
		t.Errorf("plan after converging: exit %d\n%s", r.code, r.stdout)
	}
}

func TestFaultInterruptWithHungServer(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "hungint", 10)
	p, kc := newFaultProxy(t, srv)
	// Writes hang once 5 went through; the lock's requests are not writes
	// of this kind (POST/PUT/DELETE), so the release is unaffected.
	p.AddRule(faultproxy.Rule{Name: "hang", Methods: []string{"PATCH"}, ExceptPath: stackRecord, Skip: 5, Faults: []faultproxy.Fault{{Kind: faultproxy.Delay, Delay: time.Hour}}})
	cmd, out, errb := gpuformProcess(t, "--kubeconfig", kc, "--chdir", dir, "--verbosity", "1", "apply", "--auto-approve", "--parallelism", "2")
	// The first five writes may include the node's labels (Modifications
	// complete) as well as creates.
	waitForOutput(t, out, " complete after ", 5)
	deadline := time.Now().Add(60 * time.Second)
	for p.Injected("hang") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the writes never hung")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := cmd.Wait()
	stopped := time.Since(start)
	t.Logf("gpuform exited %s after SIGINT with 2 writes hung", stopped.Round(time.Millisecond))
	if stopped > time.Second {
		t.Errorf("apply took %s to stop after SIGINT with hung writes, want at most 1s", stopped)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit after SIGINT: %v, want status 1\n%s", err, errb.String())
	}
	for _, w := range []string{"Error: Apply interrupted:", "may or may not have been applied", "interrupted before it started"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errb.String())
		}
	}
	if h := lockHolder(t, "hungint"); h != "" {
		t.Errorf("the lock was not released after SIGINT: held by %s", h)
	}
	p.ClearRules()
	if r := via(t, kc, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply after the interruption: exit %d\n%s", r.code, r.stderr)
	}
}

// countObjectsIn counts the stack's Namespaces, ResourceQuotas and
// RoleBindings on the server cs reaches, leaving out those being deleted
// (a deletion timestamp set, waiting for a finalizer such as the garbage
// collector's foregroundDeletion, or for the namespace controller).
func countObjectsIn(t *testing.T, cs kubernetes.Interface, stack string) map[string]int {
	t.Helper()
	out := map[string]int{"Namespace": 0, "ResourceQuota": 0, "RoleBinding": 0}
	for kind, objs := range listStackObjects(t, cs, stack) {
		for _, o := range objs {
			if o.GetDeletionTimestamp() == nil {
				out[kind]++
			}
		}
	}
	return out
}

// listStackObjects lists the stack's Namespaces, ResourceQuotas and RoleBindings
// on the server cs reaches, those being deleted included.
func listStackObjects(t *testing.T, cs kubernetes.Interface, stack string) map[string][]metav1.Object {
	t.Helper()
	ctx := kubeapitest.Context(t)
	sel := metav1.ListOptions{LabelSelector: "gpuform.dev/stack=" + stack}
	out := map[string][]metav1.Object{}
	nss, err := cs.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nss.Items {
		out["Namespace"] = append(out["Namespace"], &nss.Items[i])
	}
	rqs, err := cs.CoreV1().ResourceQuotas("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rqs.Items {
		out["ResourceQuota"] = append(out["ResourceQuota"], &rqs.Items[i])
	}
	rbs, err := cs.RbacV1().RoleBindings("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rbs.Items {
		out["RoleBinding"] = append(out["RoleBinding"], &rbs.Items[i])
	}
	return out
}

// wantStackDestroyed checks, just after a destroy, that none of the stack's
// Namespaces, ResourceQuotas and RoleBindings is left outside deletion, and
// that its ResourceQuotas and RoleBindings then go within a minute: a
// foreground delete leaves an object in place, with a deletion timestamp,
// until the garbage collector has run.
func wantStackDestroyed(t *testing.T, cs kubernetes.Interface, stack string) {
	t.Helper()
	if got := countObjectsIn(t, cs, stack); got["Namespace"]+got["RoleBinding"]+got["ResourceQuota"] != 0 {
		t.Errorf("after destroy: %v left, not being deleted", got)
		return
	}
	deadline := time.Now().Add(time.Minute)
	for {
		objs := listStackObjects(t, cs, stack)
		left := len(objs["ResourceQuota"]) + len(objs["RoleBinding"])
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			for kind, list := range objs {
				for _, o := range list {
					t.Errorf("after destroy: %s %s/%s still there (deleted at %v, finalizers %v)", kind, o.GetNamespace(), o.GetName(), o.GetDeletionTimestamp(), o.GetFinalizers())
				}
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestFaultServerRestartMidApply(t *testing.T) {
	// A server of its own: this test stops it.
	dataDir := t.TempDir()
	s, err := kubeapitest.Start(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	cfg, err := s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	ctx := kubeapitest.Context(t)
	if err := kubeapitest.ApplyCRDs(ctx, cfg, "kserve.yaml"); err != nil {
		t.Fatal(err)
	}
	const n = 500
	dir := tenantsConfigOn(t, cfg, "restart", n)

	cmd, out, errb := gpuformProcess(t, "--kubeconfig", s.Kubeconfig, "--chdir", dir, "--verbosity", "1", "apply", "--auto-approve")
	waitForOutput(t, out, "Creation complete", 300)
	stopAt := time.Now()
	s.Stop()
	t.Logf("the API server stopped %s after SIGTERM", time.Since(stopAt).Round(time.Millisecond))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("apply still ran 3 minutes after the server stopped:\n%s", errb.String())
	}
	t.Logf("apply ended %s after the server was stopped", time.Since(stopAt).Round(time.Millisecond))
	if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("apply with the server stopped: %v, want exit 1\n%s", werr, errb.String())
	}
	acct := atoiMatch(t, accountRE, errb.String())
	plan := atoiMatch(t, planAddRE, out.String())
	total := plan[0] + plan[1]
	t.Logf("the stopped apply's account: %d applied, %d failed, %d skipped of %d", acct[0], acct[2], acct[3], total)
	if acct[0] < 300 || acct[0]+acct[2]+acct[3] != total {
		t.Errorf("account %v for %d changes: want at least the 300 seen complete, and every change accounted for", acct, total)
	}
	if !strings.Contains(errb.String(), "the API server looks unavailable") {
		t.Errorf("the account does not say the server went away:\n%s", lastLines(errb.String(), 20))
	}

	restartAt := time.Now()
	s, err = kubeapitest.Start(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted on the same data in %s at %s", time.Since(restartAt).Round(time.Millisecond), s.URL)
	convergeAt := time.Now()
	// The killed run's lock survives the restart; wait for it to expire.
	r := runWith(t, nil, "--kubeconfig", s.Kubeconfig, "--chdir", dir, "apply", "--auto-approve", "--lock-timeout", "2m")
	if r.code != 0 {
		t.Fatalf("apply after the restart: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("the next apply converged in %s: %s", time.Since(convergeAt).Round(time.Millisecond), lastLine(r.stdout))
	if p := runWith(t, nil, "--kubeconfig", s.Kubeconfig, "--chdir", dir, "plan", "--detailed-exitcode"); p.code != 0 {
		t.Fatalf("plan after converging: exit %d\n%s", p.code, p.stdout)
	}
	cfg, err = s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"Namespace": n, "ResourceQuota": n, "RoleBinding": n}
	if got := countObjectsIn(t, cs, "restart"); got["Namespace"] != want["Namespace"] || got["ResourceQuota"] != want["ResourceQuota"] || got["RoleBinding"] != want["RoleBinding"] {
		t.Errorf("objects after the restart and the rerun: %v, want exactly %v", got, want)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
