package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestImport: on the real API server, an existing namespace that a tenant
// block would create is in the way (plan exits 1); gpuform import records
// it in the stack's inventory under the lock, after which plan shows an
// update of it, not a conflict, and apply takes it over. Import refuses a
// held lock, an address that does not produce the object, an object no
// block produces, and one that carries another stack's label, recording
// nothing. Before the verb existed every import here failed with unknown
// command "import".
func TestImport(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	const stack = "taken"
	dir := twoTenants(t, "", stack, false)
	mine := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: stack + "-a", Labels: map[string]string{"team": "a"}}}
	mine, err := cs.CoreV1().Namespaces().Create(ctx, mine, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: stack + "-b", Labels: map[string]string{engine.LabelStack: "other"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, nil, "--chdir", dir, "plan")
	wantExit(t, r, 1, "in the way")

	for _, c := range []struct {
		name, address, id, want string
	}{
		{"another block's object", "tenant.b", "Namespace/" + stack + "-a", "is produced by tenant.a, not tenant.b"},
		{"no block produces it", "tenant.a", "ConfigMap/" + stack + "-a/nope", "no block of the configuration produces"},
		{"another stack's object", "tenant.b", "Namespace/" + stack + "-b", "belongs to gpuform stack other"},
		{"not an id", "tenant.a", "Namespace", "is not KIND/NAMESPACE/NAME"},
	} {
		r := runWith(t, nil, "--chdir", dir, "import", c.address, c.id)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want 1 with %q\n%s", c.name, r.code, c.want, r.stderr)
		}
	}
	holdLease(t, stack, "someone-else")
	r = runWith(t, nil, "--chdir", dir, "import", "tenant.a", "Namespace/"+stack+"-a")
	wantExit(t, r, 1, "held by someone-else")
	if err := cs.CoordinationV1().Leases("gpuform-system").Delete(ctx, "gpuform-"+stack, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = runWith(t, nil, "--chdir", dir, "state", "list")
	if strings.Contains(r.stdout, stack+"-a") {
		t.Fatalf("a refused import recorded the object:\n%s", r.stdout)
	}

	r = runWith(t, nil, "--chdir", dir, "import", "tenant.a", "namespace/"+stack+"-a")
	wantExit(t, r, 0)
	if !strings.Contains(r.stdout, "Import successful: Namespace "+stack+"-a is recorded as tenant.a") {
		t.Errorf("import said:\n%s", r.stdout)
	}
	r = runWith(t, nil, "--chdir", dir, "state", "list")
	if !strings.Contains(r.stdout, "tenant.a") || !strings.Contains(r.stdout, stack+"-a") {
		t.Errorf("state list after import:\n%s%s", r.stdout, r.stderr)
	}
	r = runWith(t, nil, "--chdir", dir, "import", "tenant.a", "Namespace/"+stack+"-a")
	wantExit(t, r, 1, "owns it already")

	// Tenant b's namespace stays another stack's: tenant a's plan has no
	// conflict left, and its namespace is an update.
	r = runWith(t, nil, "--chdir", dir, "plan", "--target", "tenant.a", "-o", "json")
	wantExit(t, r, 0)
	if !strings.Contains(r.stdout, `"conflicts": 0`) || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), `"address": "tenant.a", "api_version": "v1", "kind": "Namespace", "name": "`+stack+`-a", "action": "update"`) {
		t.Errorf("plan after import: no update of the imported namespace, or a conflict:\n%s", r.stdout)
	}
	r = runWith(t, nil, "--chdir", dir, "apply", "--auto-approve", "--target", "tenant.a")
	wantExit(t, r, 0)
	ns, err := cs.CoreV1().Namespaces().Get(ctx, stack+"-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.UID != mine.UID || ns.Labels[engine.LabelStack] != stack || ns.Labels["team"] != "a" {
		t.Errorf("after apply the imported namespace is %s with labels %v, want %s with the stack's label and its own", ns.UID, ns.Labels, mine.UID)
	}
	r = runWith(t, nil, "--chdir", dir, "plan", "--target", "tenant.a", "--detailed-exitcode")
	wantExit(t, r, 0)
}
