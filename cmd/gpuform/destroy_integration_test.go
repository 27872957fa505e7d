package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// twoTenants writes a stack of two tenants, each administered by a user,
// the first protected when protectA, and returns its directory.
func twoTenants(t *testing.T, dir, stack string, protectA bool) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	src := fmt.Sprintf(`gpuform {
  stack = %[1]q
}

priority %[1]q {
  value = 100
}

tenant "a" {
  namespace  = "%[1]s-a"
  priorities = [priority.%[1]s]
  admins     = ["user:%[1]s-a-admin"]
  cpu        = "4"
  protect    = %[2]t
}

tenant "b" {
  namespace  = "%[1]s-b"
  priorities = [priority.%[1]s]
  admins     = ["user:%[1]s-b-admin"]
  cpu        = "4"
  protect    = false
}
`, stack, protectA)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runEnvLogged runs gpuform in-process against the test server with env
// and, when w is set, its writes recorded there.
func runEnvLogged(env []string, w *writeLog, args ...string) result {
	if w == nil {
		return runEnvWrapped(env, nil, args...)
	}
	return runEnvWrapped(env, w.wrap, args...)
}

// runEnvWrapped runs gpuform in-process against the test server with env
// and its transport wrapped by wrap, when set.
func runEnvWrapped(env []string, wrap func(http.RoundTripper) http.RoundTripper, args ...string) result {
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb, env: env, wrapTransport: wrap}
	cmd := newRoot(g)
	cmd.SetArgs(append([]string{"--kubeconfig", srv.Kubeconfig, "--no-color"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return toResult(out.String(), errb.String(), err)
}

// TestDestroy: destroy deletes what the stack's record holds and nothing
// else, on the real API server, keeping apply's safeties: a held lock, a
// protected tenant (by the configuration or the live namespace), more
// deletes than --max-deletes (which a destroy must be given) and a signed
// destroy plan edited or made on another ref are each refused with nothing
// deleted; the destroy deletes every tenant's RoleBindings before any
// ResourceQuota or admission policy or binding, and leaves an object that
// forges the stack's label in place, reporting it, without a write to it. Before the verb existed
// every run here failed with unknown command "destroy" / flag --destroy.
func TestDestroy(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	const stack = "wreck"
	dir := twoTenants(t, "", stack, false)
	if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	before := countObjects(t, stack)
	if before["Namespace"] != 2 || before["RoleBinding"] != 2 || before["ResourceQuota"] != 2 {
		t.Fatalf("after apply: %v", before)
	}
	// An object forges the stack's labels, outside every namespace the
	// destroy deletes (deleting a namespace deletes what is in it, which is
	// what protect is for).
	forged := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: stack + "-forged", Labels: map[string]string{engine.LabelStack: stack, engine.LabelManagedBy: "gpuform"}}, Value: 1}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, forged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unchanged := func(when string) {
		t.Helper()
		if got := countObjects(t, stack); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("%s: objects %v, want %v untouched", when, got, before)
		}
	}

	holdLease(t, stack, "someone-else")
	r := runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve", "--max-deletes", "100")
	wantExit(t, r, 1, "held by someone-else")
	unchanged("destroy under a held lock")
	if err := cs.CoordinationV1().Leases("gpuform-system").Delete(ctx, "gpuform-"+stack, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	r = runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve")
	wantExit(t, r, 1, "more than --max-deletes=0", "run it with --max-deletes")
	unchanged("destroy without --max-deletes")

	twoTenants(t, dir, stack, true) // protected in the configuration only
	r = runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve", "--max-deletes", "100")
	wantExit(t, r, 1, "protected tenants: "+stack+"-a (tenant.a)")
	unchanged("destroy of a tenant the configuration protects")
	r = runWith(t, nil, "--chdir", dir, "plan", "--destroy", "--out", "p.plan")
	wantExit(t, r, 1, "protected tenants: "+stack+"-a (tenant.a)")
	if _, err := os.Stat(filepath.Join(dir, "p.plan")); err == nil {
		t.Error("plan --destroy saved a plan that deletes a protected tenant")
	}
	twoTenants(t, dir, stack, false)

	// A signed destroy plan: marked in the file and the text; edited, or
	// applied from another ref, it is refused.
	key := []string{engine.PlanKeyEnv + "=" + unitPlanKey, engine.RefEnv + "=main"}
	r = runEnvLogged(key, nil, "--chdir", dir, "plan", "--destroy", "--out", "d.plan")
	wantExit(t, r, 0)
	for _, want := range []string{"Destroy plan:", "is not in the stack's inventory: left in place, not deleted", "gpuform apply --max-deletes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan --destroy lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "- PriorityClass "+stack+"-forged") {
		t.Errorf("the destroy plan deletes the forged PriorityClass:\n%s", r.stdout)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "d.plan"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(saved, []byte(`"destroy": true`)) {
		t.Fatalf("the saved plan is not marked as a destroy plan")
	}
	// Unmarked, the plan would escape a destroy's limits: the signature
	// no longer matches.
	editPlanFile(t, filepath.Join(dir, "d.plan"), filepath.Join(dir, "t.plan"), true, func(pf *engine.PlanFile) { pf.Destroy = false })
	r = runEnvLogged(key, nil, "--chdir", dir, "apply", "t.plan", "--max-deletes", "100")
	wantExit(t, r, 1, "signature does not match")
	r = runEnvLogged([]string{key[0], engine.RefEnv + "=feature"}, nil, "--chdir", dir, "apply", "d.plan", "--max-deletes", "100")
	wantExit(t, r, 1, "--allow-other-ref")
	unchanged("tampered or other-ref destroy plan")
	r = runEnvLogged(key, nil, "--chdir", dir, "apply", "d.plan")
	wantExit(t, r, 1, "more than --max-deletes=10")
	r = runEnvLogged(key, nil, "--chdir", dir, "apply", "d.plan", "--allow-destroy")
	wantExit(t, r, 1, "more than --max-deletes=10")
	unchanged("destroy plan over apply's --max-deletes, --allow-destroy or not")

	// When the first DELETE of enforcement is sent, no RoleBinding of the
	// stack may exist at all, not even one being deleted (a RoleBinding
	// that waits for the garbage collector still grants access).
	w := &writeLog{slow: 20 * time.Millisecond}
	var left []string
	var once sync.Once
	guard := func(rt http.RoundTripper) http.RoundTripper {
		logged := w.wrap(rt)
		return roundTrip(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodDelete && (strings.Contains(req.URL.Path, "/resourcequotas/") || strings.Contains(req.URL.Path, "/validatingadmissionpolicies/") || strings.Contains(req.URL.Path, "/validatingadmissionpolicybindings/")) {
				once.Do(func() {
					rbs, err := cs.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{LabelSelector: engine.LabelStack + "=" + stack})
					if err != nil {
						left = []string{err.Error()}
						return
					}
					for _, rb := range rbs.Items {
						left = append(left, rb.Namespace+"/"+rb.Name)
					}
				})
			}
			return logged.RoundTrip(req)
		})
	}
	r = runEnvWrapped(key, guard, "--chdir", dir, "apply", "d.plan", "--max-deletes", "100")
	wantExit(t, r, 0)
	if len(left) > 0 {
		t.Errorf("RoleBindings still there when the first quota or policy DELETE was sent: %v", left)
	}
	wantStackDestroyed(t, cs, stack)
	if _, err := cs.SchedulingV1().PriorityClasses().Get(ctx, stack+"-forged", metav1.GetOptions{}); err != nil {
		t.Errorf("the forged PriorityClass, not in the record: %v", err)
	}
	for _, wr := range w.log() {
		if strings.Contains(wr.path, "forged") {
			t.Errorf("destroy wrote %s", wr.path)
		}
	}
	// Access goes before enforcement: every RoleBinding DELETE was answered
	// before the first DELETE of a quota or an admission policy was sent.
	var lastAccess, firstGuard time.Time
	for _, wr := range w.log() {
		switch {
		case strings.Contains(wr.path, "/rolebindings/"):
			if wr.answered.After(lastAccess) {
				lastAccess = wr.answered
			}
		case strings.Contains(wr.path, "/resourcequotas/") || strings.Contains(wr.path, "/validatingadmissionpolicies/") || strings.Contains(wr.path, "/validatingadmissionpolicybindings/"):
			if firstGuard.IsZero() || wr.sent.Before(firstGuard) {
				firstGuard = wr.sent
			}
		}
	}
	if lastAccess.IsZero() || firstGuard.IsZero() || !lastAccess.Before(firstGuard) {
		t.Errorf("RoleBindings' deletes last answered %v, first quota/policy delete sent %v: access outlived enforcement\n%v", lastAccess, firstGuard, w.log())
	}
	r = runWith(t, nil, "--chdir", dir, "state", "list", "-o", "json")
	if r.code != 0 || strings.Contains(r.stdout, stack+"-a") {
		t.Errorf("state list after destroy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDestroyProtectedByMark: a tenant applied with protect = true carries
// the mark on its namespace, and destroy refuses it even with
// --allow-destroy's twin, --max-deletes; once protect = false is applied
// (which removes the mark), destroy deletes it. Before the verb existed,
// destroy was an unknown command.
func TestDestroyProtectedByMark(t *testing.T) {
	setupCluster(t)
	const stack = "marked"
	dir := twoTenants(t, "", stack, true)
	if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	twoTenants(t, dir, stack, false)
	r := runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve", "--max-deletes", "100")
	wantExit(t, r, 1, "protected tenants: "+stack+"-a (tenant.a)", "set protect = false on the tenant and apply, then destroy")
	if got := countObjects(t, stack); got["Namespace"] != 2 {
		t.Fatalf("a refused destroy deleted namespaces: %v", got)
	}
	if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply of protect = false: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve", "--max-deletes", "100")
	wantExit(t, r, 0)
	wantStackDestroyed(t, clientset(t), stack)
	if !strings.Contains(r.stdout, "Destroy complete! Resources: ") {
		t.Errorf("destroy said:\n%s", r.stdout)
	}
}

// TestDestroyStuckAccess: a tenant's admin puts a finalizer on its own
// admins RoleBinding, so that its delete leaves it in place, still
// granting access. Destroy fails that delete and deletes none of the
// enforcement below it (the tenant's ResourceQuota, the stack's admission
// policies and bindings); once the finalizer is gone, destroy completes.
// Before, RoleBindings were deleted in the foreground and the walk went on
// as soon as the DELETE was answered, while they still existed.
func TestDestroyStuckAccess(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	const stack = "stuck"
	dir := twoTenants(t, "", stack, false)
	if r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	tenant := tenantClient(t, stack+"-a-admin")
	rb, err := tenant.RbacV1().RoleBindings(stack+"-a").Get(ctx, "gpuform-admins", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb.Finalizers = append(rb.Finalizers, "example.com/keep")
	if _, err := tenant.RbacV1().RoleBindings(stack+"-a").Update(ctx, rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	unfinalize := func() {
		rb, err := cs.RbacV1().RoleBindings(stack+"-a").Get(ctx, "gpuform-admins", metav1.GetOptions{})
		if err != nil {
			return
		}
		rb.Finalizers = nil
		if _, err := cs.RbacV1().RoleBindings(stack+"-a").Update(ctx, rb, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(unfinalize)

	r := runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve", "--max-deletes", "100")
	wantExit(t, r, 1, "still there after its delete", "example.com/keep")
	if _, err := cs.CoreV1().ResourceQuotas(stack+"-a").Get(ctx, "gpuform", metav1.GetOptions{}); err != nil {
		t.Errorf("the tenant's quota went while its access stayed: %v", err)
	}
	vaps, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{LabelSelector: engine.LabelStack + "=" + stack})
	if err != nil || len(vaps.Items) == 0 {
		t.Errorf("the stack's admission policy bindings went while a tenant's access stayed: %v, %d left", err, len(vaps.Items))
	}
	unfinalize()
	r = runWith(t, nil, "--chdir", dir, "destroy", "--auto-approve", "--max-deletes", "100")
	wantExit(t, r, 0)
}
