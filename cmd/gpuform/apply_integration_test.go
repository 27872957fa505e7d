package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	kube "github.com/gpuform/gpuform/providers/kubernetes"
)

// countObjects counts the stack's objects of the kinds a tenantsConfig makes.
func countObjects(t *testing.T, stack string) map[string]int {
	t.Helper()
	return countObjectsIn(t, clientset(t), stack)
}

func TestApplyFailureInOneBranch(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	dir := tenantsConfig(t, "branch", 3)
	// A ValidatingAdmissionPolicy (no webhook) rejects one tenant's namespace.
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-branch-0001"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"namespaces"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: `object.metadata.name != "branch-0001"`, Message: "namespace branch-0001 is frozen"}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-branch-0001"},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "deny-branch-0001", ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Policies take effect asynchronously; wait until one is enforced.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().Namespaces().Create(ctx, nsObject("branch-0001"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the admission policy never took effect")
		}
		time.Sleep(200 * time.Millisecond)
	}

	r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve")
	if r.code != 1 {
		t.Fatalf("apply with a rejected namespace: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"failed   Namespace branch-0001",
		"namespace branch-0001 is frozen",
		"skipped  ResourceQuota branch-0001/gpuform",
		"skipped  InferenceService branch-0001/m-0001",
		"Error: Apply failed:",
	} {
		if !strings.Contains(strings.Join(strings.Fields(r.stderr), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("report lacks %q:\n%s", want, r.stderr)
		}
	}
	got := countObjects(t, "branch")
	if got["Namespace"] != 2 || got["ResourceQuota"] != 2 || got["RoleBinding"] != 2 {
		t.Errorf("independent branches were not applied: %v", got)
	}

	if err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "deny-branch-0001", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		r = runWith(t, nil, "--chdir", dir, "apply", "--auto-approve")
		if r.code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete! Resources: 4 added, 0 changed, 0 destroyed.") {
		t.Fatalf("rerun after the fix: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if p := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode"); p.code != 0 {
		t.Errorf("plan after the rerun: exit %d\n%s", p.code, p.stdout)
	}
	if got := countObjects(t, "branch"); got["Namespace"] != 3 || got["ResourceQuota"] != 3 || got["RoleBinding"] != 3 {
		t.Errorf("after the rerun: %v, want 3 of each", got)
	}
}

func TestApplyLock(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	dir := tenantsConfig(t, "locked", 60)

	t.Run("two applies at once: exactly one proceeds", func(t *testing.T) {
		var wg sync.WaitGroup
		res := make([]result, 2)
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = runWith(t, nil, "--chdir", dir, "apply", "--auto-approve")
			}()
		}
		wg.Wait()
		ok, held := 0, 0
		for _, r := range res {
			switch {
			case r.code == 0:
				ok++
			case strings.Contains(r.stderr, "Error acquiring the state lock") && strings.Contains(r.stderr, "is held by") && strings.Contains(r.stderr, "pid"):
				held++
			default:
				t.Errorf("unexpected result: exit %d\n%s", r.code, r.stderr)
			}
		}
		if ok != 1 || held != 1 {
			t.Fatalf("%d applies succeeded and %d were refused by the lock; want 1 and 1", ok, held)
		}
	})

	leases := clientset(t).CoordinationV1().Leases(kube.LockNamespace)
	if h := lockHolder(t, "locked"); h != "" {
		t.Fatalf("the lock was not released after apply: held by %s", h)
	}

	// ghost replaces the Lease (kept, released, after an apply) with one
	// another process took.
	ghost := func(renewed time.Time) {
		_ = leases.Delete(ctx, kube.LockName("locked"), metav1.DeleteOptions{})
		secs := int32(30)
		holder := "ghost@old-laptop pid 4242"
		at := metav1.NewMicroTime(renewed)
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: kube.LockName("locked"), Namespace: kube.LockNamespace, Annotations: map[string]string{"gpuform.dev/lock-id": "deadbeef"}},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &at, RenewTime: &at},
		}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a lock left by a killed process expires", func(t *testing.T) {
		ghost(time.Now().Add(-time.Minute))
		if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
			t.Fatalf("apply over an expired lock: exit %d\n%s", r.code, r.stderr)
		}
	})

	t.Run("a live lock is cleared by force-unlock", func(t *testing.T) {
		ghost(time.Now())
		r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve")
		if r.code != 1 || !strings.Contains(r.stderr, "ghost@old-laptop pid 4242") || !strings.Contains(r.stderr, "deadbeef") {
			t.Fatalf("apply over a held lock: exit %d\n%s", r.code, r.stderr)
		}
		if r := runWith(t, nil, "--chdir", dir, "force-unlock", "wrong-id"); r.code != 1 {
			t.Errorf("force-unlock with the wrong ID: exit %d", r.code)
		}
		if r := runWith(t, nil, "--chdir", dir, "force-unlock", "deadbeef"); r.code != 0 {
			t.Fatalf("force-unlock: exit %d\n%s", r.code, r.stderr)
		}
		if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
			t.Fatalf("apply after force-unlock: exit %d\n%s", r.code, r.stderr)
		}
	})

	t.Run("--lock-timeout waits for the holder", func(t *testing.T) {
		ghost(time.Now())
		go func() {
			time.Sleep(time.Second)
			_ = leases.Delete(context.Background(), kube.LockName("locked"), metav1.DeleteOptions{})
		}()
		if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve", "--lock-timeout", "20s"); r.code != 0 {
			t.Fatalf("apply with --lock-timeout: exit %d\n%s", r.code, r.stderr)
		}
	})
}

// gpuformProcess starts this test binary as gpuform (see TestMain).
func gpuformProcess(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--kubeconfig", srv.Kubeconfig, "--no-color"}, args...)...)
	cmd.Env = append(os.Environ(), "GPUFORM_BE_MAIN=1")
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

// waitForOutput waits until the process has printed n progress lines.
func waitForOutput(t *testing.T, out *syncBuffer, marker string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(out.String(), marker) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d %q lines after 60s:\n%s", n, marker, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestApplyKilledMidwayConverges(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "killed", 200)
	cmd, out, _ := gpuformProcess(t, "--chdir", dir, "--verbosity", "1", "apply", "--auto-approve", "--parallelism", "4")
	waitForOutput(t, out, "Creation complete", 100)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	partial := countObjects(t, "killed")
	if partial["Namespace"] == 200 && partial["RoleBinding"] == 200 {
		t.Fatalf("the apply finished before it was killed: %v", partial)
	}
	// The killed process left its lock; the next apply waits for it to expire.
	r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve", "--lock-timeout", "90s")
	if r.code != 0 {
		t.Fatalf("apply after the kill: exit %d\n%s", r.code, r.stderr)
	}
	if p := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode"); p.code != 0 {
		t.Fatalf("plan after converging: exit %d\n%s", p.code, p.stdout)
	}
	want := map[string]int{"Namespace": 200, "ResourceQuota": 200, "RoleBinding": 200}
	if got := countObjects(t, "killed"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("objects after converging: %v, want exactly %v", got, want)
	}
}

func TestApplyInterrupted(t *testing.T) {
	setupCluster(t)
	dir := tenantsConfig(t, "sigint", 150)
	cmd, out, errb := gpuformProcess(t, "--chdir", dir, "--verbosity", "1", "apply", "--auto-approve", "--parallelism", "2")
	waitForOutput(t, out, "Creation complete", 20)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := cmd.Wait()
	// Stopping work is immediate (requests in flight get 0.5s at most);
	// releasing the lock is one more API call.
	stopped := time.Since(start)
	t.Logf("gpuform exited %s after SIGINT", stopped.Round(time.Millisecond))
	if stopped > time.Second {
		t.Errorf("apply took %s to stop after SIGINT, want at most 1s", stopped)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit after SIGINT: %v, want status 1\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "Error: Apply interrupted:") || !strings.Contains(errb.String(), "interrupted before it started") {
		t.Errorf("no account of the interruption:\n%s", errb.String())
	}
	if h := lockHolder(t, "sigint"); h != "" {
		t.Errorf("the lock was not released after SIGINT: held by %s", h)
	}
	if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply after the interruption: exit %d\n%s", r.code, r.stderr)
	}
}

func nsObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
