package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestTarget: --target narrows plan and apply to one block and what it
// depends on, on the real API server. A targeted tenant brings the stack's
// admission policies and bindings (its guard objects), never its access
// alone; another tenant is left out; the warning says targeting is in
// effect, a saved plan records its targets and apply of it says so again;
// an address no block has is refused with the addresses there are. Before
// the flag existed every run here failed with unknown flag --target.
func TestTarget(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	const stack = "aimed"
	dir := twoTenants(t, "", stack, false)

	r := runWith(t, nil, "--chdir", dir, "plan", "--target", "tenant.nope")
	wantExit(t, r, 1, `no block at --target address "tenant.nope"`, "tenant.a, tenant.b")

	r = runWith(t, nil, "--chdir", dir, "plan", "--target", "tenant.a")
	wantExit(t, r, 0, "Warning: Resource targeting is in effect", "narrowed to tenant.a")
	for _, want := range []string{"Namespace " + stack + "-a", "RoleBinding " + stack + "-a/gpuform-admins", "ResourceQuota " + stack + "-a/gpuform", "ValidatingAdmissionPolicy ", "ValidatingAdmissionPolicyBinding "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan --target tenant.a lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, stack+"-b") {
		t.Errorf("plan --target tenant.a plans tenant.b:\n%s", r.stdout)
	}

	r = runWith(t, nil, "--chdir", dir, "apply", "--auto-approve", "--target", "tenant.a")
	wantExit(t, r, 0, "Resource targeting is in effect")
	sel := metav1.ListOptions{LabelSelector: "gpuform.dev/stack=" + stack}
	vaps, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	binds, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(vaps.Items) == 0 || len(binds.Items) != len(vaps.Items) {
		t.Errorf("a targeted tenant's access came without the stack's policies: %d policies, %d bindings", len(vaps.Items), len(binds.Items))
	}
	got := countObjects(t, stack)
	if got["Namespace"] != 1 || got["RoleBinding"] != 1 || got["ResourceQuota"] != 1 {
		t.Errorf("after apply --target tenant.a: %v, want tenant a's objects only", got)
	}

	r = runWith(t, nil, "--chdir", dir, "plan", "--target", "tenant.b", "--out", "b.plan")
	wantExit(t, r, 0, "narrowed to tenant.b")
	r = runWith(t, nil, "--chdir", dir, "apply", "b.plan")
	wantExit(t, r, 0, "Warning: Resource targeting is in effect", "narrowed to tenant.b")
	if got := countObjects(t, stack); got["Namespace"] != 2 || got["RoleBinding"] != 2 {
		t.Errorf("after apply of the targeted plan: %v", got)
	}
	r = runWith(t, nil, "--chdir", dir, "apply", "b.plan", "--target", "tenant.a")
	wantExit(t, r, 1)
}
