package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// sandboxedConfig writes a stack of one tenant whose pods must run in
// gVisor, administered by user admin, and returns its directory.
func sandboxedConfig(t *testing.T, stack, admin, runtimeClass string) string {
	t.Helper()
	dir := t.TempDir()
	rc := ""
	if runtimeClass != "" {
		rc = fmt.Sprintf("  runtime_class = %q\n", runtimeClass)
	}
	src := fmt.Sprintf(`gpuform {
  stack = %[1]q
}

priority %[1]q {
  value = 100
}

tenant "sandboxed" {
  namespace  = %[1]q
  priorities = [priority.%[1]s]
  admins     = ["user:%[2]s"]
  protect    = false
%[3]s}
`, stack, admin, rc)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tenantClient is a client of the test server acting as user (client-go
// impersonation), with no client-side rate limit.
func tenantClient(t *testing.T, user string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate.UserName = user
	cfg.QPS, cfg.Burst = 1000, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// adminClient is a client of the test server with its own rights.
func adminClient(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// unsandboxedPod is a pod without a runtimeClassName.
func unsandboxedPod(ns string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// TestAccessOnlyOnceEnforced: a tenant admin hammering pod creates in its
// namespace from before the first apply until after it never gets a pod
// without the tenant's runtimeClassName admitted: its RoleBinding is
// written only once the API server enforces the runtime-class policy
// there. The hammer must have had access (the policy, not RBAC, denied it
// at the end), so the test proves the order, not a lack of rights.
func TestAccessOnlyOnceEnforced(t *testing.T) {
	setupCluster(t)
	const stack, admin = "enforce-first", "sandbox-admin"
	dir := sandboxedConfig(t, stack, admin, "gvisor")
	cs := tenantClient(t, admin)
	ctx, stop := context.WithCancel(context.Background())
	var admitted, policyDenied, tries atomic.Int64
	var lastErr atomic.Value
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				tries.Add(1)
				_, err := cs.CoreV1().Pods(stack).Create(context.Background(), unsandboxedPod(stack), metav1.CreateOptions{})
				switch {
				case err == nil:
					admitted.Add(1)
				case strings.Contains(err.Error(), "must set runtimeClassName to gvisor"):
					policyDenied.Add(1)
				default:
					lastErr.Store(err.Error())
				}
			}
		})
	}
	applyOK(t, nil, dir)
	// Hammer on until the tenant's access shows (the API server's RBAC
	// cache follows the RoleBinding a moment later, slower under load).
	for deadline := time.Now().Add(30 * time.Second); policyDenied.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	if n := admitted.Load(); n > 0 {
		t.Errorf("%d pods without runtimeClassName gvisor were admitted in namespace %s (of %d tries): access came before enforcement", n, stack, tries.Load())
	}
	if policyDenied.Load() == 0 {
		t.Errorf("the policy never denied the tenant's pods (%d tries): the hammer never got access (last error: %v)", tries.Load(), lastErr.Load())
	}
}

// TestAccessRefusedWhenPolicyNotEnforced: on an API server that stores the
// stack's admission policies but does not enforce them (its admission
// chain lacks ValidatingAdmissionPolicy), apply fails the tenant's
// RoleBinding with the reason, writes no RoleBinding, and applies the rest.
// (A policy switched off by another field manager is drift that apply
// restores before it grants access: TestGuardObjectsOwnedWhole.)
func TestAccessRefusedWhenPolicyNotEnforced(t *testing.T) {
	s, err := kubeapitest.StartOptions(t.TempDir(), kubeapitest.Options{APIServerArgs: []string{"--disable-admission-plugins=ValidatingAdmissionPolicy"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	cfg, err := s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	const stack, admin = "enforce-off", "off-admin"
	dir := sandboxedConfig(t, stack, admin, "gvisor")
	r := runWith(t, nil, "--kubeconfig", s.Kubeconfig, "--chdir", dir, "apply", "--auto-approve")
	// Whichever of the stack's policies the probe tries first.
	want := regexp.MustCompile(`the API server does not enforce policy gpuform-` + stack + `-[a-z-]+ in namespace ` + stack + ` yet: not granting access`)
	if r.code == 0 || !want.MatchString(r.stdout+r.stderr) {
		t.Fatalf("apply where the policies are not enforced: exit %d, want non-zero saying %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.RbacV1().RoleBindings(stack).Get(ctx, "gpuform-admins", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the tenant's RoleBinding: %v, want not found: access granted though the policies are not enforced", err)
	}
	if _, err := cs.SchedulingV1().PriorityClasses().Get(ctx, stack, metav1.GetOptions{}); err != nil {
		t.Errorf("the stack's PriorityClass: %v: the apply skipped a change unrelated to access", err)
	}
}

// TestPlanWarnsOfPodsTheTenantNowBreaks: pods running in a tenant's
// namespace, then the configuration gives the tenant a runtime_class:
// plan warns of those pods, named, at the tenant's block, in one line.
func TestPlanWarnsOfPodsTheTenantNowBreaks(t *testing.T) {
	setupCluster(t)
	const stack = "enforce-warn"
	dir := sandboxedConfig(t, stack, "warn-admin", "")
	applyOK(t, nil, dir)
	ctx := context.Background()
	cs := adminClient(t)
	var names []string
	for range 7 {
		p, err := cs.CoreV1().Pods(stack).Create(ctx, unsandboxedPod(stack), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
	}
	if r := runWith(t, nil, "--chdir", dir, "plan"); strings.Contains(r.stderr, "running pods") {
		t.Fatalf("plan warns before the configuration changed:\n%s", r.stderr)
	}
	editConfig(t, dir, "  protect    = false\n", "  protect    = false\n  runtime_class = \"gvisor\"\n")
	r := runWith(t, nil, "--chdir", dir, "plan")
	want := "7 running pods of tenant.sandboxed in namespace " + stack + " break its runtime_class (gvisor): "
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, want) || !strings.Contains(r.stdout+r.stderr, "and 2 more") {
		t.Fatalf("plan: exit %d, want 0 warning %q ... and 2 more\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
	named := 0
	for _, n := range names {
		if strings.Contains(r.stdout+r.stderr, n) {
			named++
		}
	}
	if named != 5 {
		t.Errorf("the warning names %d of the pods, want 5\n%s", named, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "main.hcl") {
		t.Errorf("the warning is not located at the tenant's block:\n%s", r.stderr)
	}
}
