package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/kinds"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// deployDir holds the deployment examples.
var deployDir = filepath.Join("..", "..", "examples", "deploy")

// applyYAML applies every object of the YAML files with server-side apply
// as the admin, for real or as a server-side dry run, and returns them.
func applyYAML(t *testing.T, dryRun bool, files ...string) []*unstructured.Unstructured {
	t.Helper()
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := metav1.ApplyOptions{FieldManager: "deploy-example-test", Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var out []*unstructured.Unstructured
	for _, file := range files {
		objs, err := kubeapitest.ReadYAML(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(objs) == 0 {
			t.Errorf("%s holds no object", file)
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("%s: %s %s: %v", file, gvk.Kind, o.GetName(), err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
			if o.GetNamespace() != "" {
				ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
			}
			got, err := ri.Apply(ctx, o.GetName(), o, opts)
			if err != nil {
				t.Fatalf("%s: apply %s %s (dry run %v): %v", file, gvk.Kind, o.GetName(), dryRun, err)
			}
			out = append(out, got)
		}
	}
	return out
}

// saKubeconfig creates service account ns/name, binds it to ClusterRole
// role and returns a kubeconfig with a token of it (TokenRequest API), the
// way a pod or a CI job would authenticate.
func saKubeconfig(t *testing.T, ns, name, role string) string {
	t.Helper()
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	src, err := os.ReadFile(srv.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`token: .*`)
	if !re.Match(src) {
		t.Fatalf("%s has no token line", srv.TokenKubeconfig)
	}
	path := filepath.Join(t.TempDir(), name+"-kubeconfig")
	if err := os.WriteFile(path, re.ReplaceAllLiteral(src, []byte("token: "+tr.Status.Token)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rules decodes a ClusterRole's rules.
func rules(t *testing.T, role *unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	raw, _, _ := unstructured.NestedSlice(role.Object, "rules")
	b, _ := json.Marshal(raw)
	var out []rbacv1.PolicyRule
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// allows reports whether rules grant verb on group/resource.
func allows(rs []rbacv1.PolicyRule, verb, group, resource string) bool {
	for _, r := range rs {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) && len(r.ResourceNames) == 0 {
			return true
		}
	}
	return false
}

// The ClusterRoles of examples/deploy/rbac on the real API server: plan and
// drift work under the read-only gpuform-drift role, apply and drift --fix
// are refused by the API server (403), gpuform-plan allows plan, and
// gpuform-apply is enough to apply a stack from scratch.
func TestRBACExampleRoles(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	cs := clientset(t)
	// gpuform-agent.yaml (the agent's role and own-node policy) has its
	// own tests with the agent (agent_integration_test.go).
	all, _ := filepath.Glob(filepath.Join(deployDir, "rbac", "*.yaml"))
	sort.Strings(all)
	var files []string
	for _, f := range all {
		if filepath.Base(f) != "gpuform-agent.yaml" {
			files = append(files, f)
		}
	}
	if len(files) != 3 || len(all) != 4 {
		t.Fatalf("examples/deploy/rbac has %v, want gpuform-agent.yaml and the roles gpuform-plan, gpuform-drift and gpuform-apply", all)
	}
	roles := map[string]*unstructured.Unstructured{}
	for _, o := range applyYAML(t, false, files...) {
		if o.GetKind() != "ClusterRole" {
			t.Errorf("%s %s in examples/deploy/rbac: want ClusterRoles only", o.GetKind(), o.GetName())
		}
		roles[o.GetName()] = o
	}
	for _, name := range []string{"gpuform-plan", "gpuform-drift", "gpuform-apply"} {
		if roles[name] == nil {
			t.Fatalf("no ClusterRole %s", name)
		}
	}

	t.Run("roles say what they grant", func(t *testing.T) {
		plan, drift, apply := rules(t, roles["gpuform-plan"]), rules(t, roles["gpuform-drift"]), rules(t, roles["gpuform-apply"])
		for _, r := range append(slices.Clone(plan), drift...) {
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" {
					t.Errorf("a read-only role grants %s on %v", v, r.Resources)
				}
			}
		}
		b1, _ := json.Marshal(plan)
		b2, _ := json.Marshal(drift)
		if string(b1) != string(b2) {
			t.Errorf("gpuform-drift is not gpuform-plan:\n%s\n%s", b1, b2)
		}
		cfg, _ := srv.RESTConfig()
		dc, _ := discovery.NewDiscoveryClientForConfig(cfg)
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
		reg := kinds.Builtin()
		read := engine.ManagedKinds()
		for _, rk := range engine.ReadKinds() {
			read = append(read, rk.Kind)
		}
		for _, k := range read {
			e, _ := reg.Lookup(k.GroupKind())
			resource := e.Resource // kinds without their CRD here (Volcano): the registry's word
			if m, err := mapper.RESTMapping(k.GroupKind(), k.Version); err == nil {
				resource = m.Resource.Resource
				if resource != e.Resource {
					t.Errorf("the registry of kinds names %s's resource %q, the API server %q", k.Kind, e.Resource, resource)
				}
			} else if !meta.IsNoMatchError(err) {
				t.Fatal(err)
			}
			for _, v := range []string{"get", "list", "watch"} {
				if !allows(plan, v, k.Group, resource) {
					t.Errorf("%s on %s (%s) missing from gpuform-plan", v, resource, k.Kind)
				}
			}
			// gpuform-apply reads only as apply does: one LIST per kind
			// (TestRBACLeastPrivilege holds it to exactly that).
			if !allows(apply, "list", k.Group, resource) {
				t.Errorf("list on %s (%s) missing from gpuform-apply", resource, k.Kind)
			}
			// What apply writes: managed kinds whole, patched ones in
			// part, read ones not at all.
			write := map[kinds.Use][]string{kinds.Managed: {"create", "patch", "delete"}, kinds.Patched: {"patch"}}[e.Use]
			for _, v := range write {
				if !allows(apply, v, k.Group, resource) {
					t.Errorf("gpuform-apply lacks %s on %s", v, resource)
				}
			}
		}
		for _, v := range []string{"create", "update", "delete"} {
			if !allows(apply, v, "coordination.k8s.io", "leases") {
				t.Errorf("gpuform-apply lacks %s on leases", v)
			}
		}
	})

	const ns = "gpuform-rbac-test"
	if err := kubeapitest.CreateNamespaces(ctx, mustRESTConfig(t), ns); err != nil {
		t.Fatal(err)
	}
	driftKC := saKubeconfig(t, ns, "drift", "gpuform-drift")
	planKC := saKubeconfig(t, ns, "plan", "gpuform-plan")
	applyKC := saKubeconfig(t, ns, "apply", "gpuform-apply")
	dir := tenantsConfig(t, "rbac", 2)
	as := func(kubeconfig string, args ...string) result {
		return runWith(t, nil, append([]string{"--kubeconfig", kubeconfig, "--chdir", dir}, args...)...)
	}

	t.Run("gpuform-apply applies a stack from scratch", func(t *testing.T) {
		r := as(applyKC, "apply", "--auto-approve")
		if r.code != 0 || !strings.Contains(r.stdout, "Apply complete! Resources: 19 added") {
			t.Fatalf("apply under gpuform-apply: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("gpuform-plan allows plan", func(t *testing.T) {
		r := as(planKC, "plan", "--detailed-exitcode")
		if r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
			t.Fatalf("plan under gpuform-plan: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("plan and drift work under gpuform-drift", func(t *testing.T) {
		if r := as(driftKC, "plan", "--detailed-exitcode"); r.code != 0 {
			t.Fatalf("plan under gpuform-drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := as(driftKC, "drift"); r.code != 0 || !strings.Contains(r.stdout, "No drift.") {
			t.Fatalf("drift under gpuform-drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if _, err := cs.CoreV1().ResourceQuotas("rbac-0000").Patch(ctx, engine.QuotaName, types.MergePatchType,
			[]byte(`{"spec":{"hard":{"requests.nvidia.com/gpu":"5"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		r := as(driftKC, "drift")
		if r.code != 2 || !strings.Contains(r.stdout, `spec.hard["requests.nvidia.com/gpu"] = "5" -> "1"`) {
			t.Fatalf("drift under gpuform-drift after a hand edit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("apply and drift --fix are refused under gpuform-drift", func(t *testing.T) {
		for _, args := range [][]string{{"apply", "--auto-approve"}, {"drift", "--fix"}} {
			r := as(driftKC, args...)
			if r.code != 1 || !strings.Contains(r.stderr, "403 Forbidden") || !strings.Contains(r.stderr, "create namespace gpuform-system for the lock") {
				t.Errorf("%v under gpuform-drift: exit %d, want 1 with 403 Forbidden\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
			}
		}
		// Refused before any change: creating the lock's namespace comes
		// first (authorization precedes the existence check, so it is
		// refused even though the namespace exists).
		q, err := cs.CoreV1().ResourceQuotas("rbac-0000").Get(ctx, engine.QuotaName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Spec.Hard["requests.nvidia.com/gpu"]; got.String() != "5" {
			t.Errorf("the refused apply changed the quota to %s", got.String())
		}
	})

	t.Run("drift --fix works under gpuform-apply", func(t *testing.T) {
		if r := as(applyKC, "drift", "--fix"); r.code != 0 {
			t.Fatalf("drift --fix under gpuform-apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

func mustRESTConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Every YAML file under examples/deploy is valid: the API server accepts
// each object in a server-side dry-run apply (agent.yaml and
// rbac/gpuform-agent.yaml have their own test).
func TestRBACDeployExamplesDryRun(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	if err := kubeapitest.CreateNamespaces(ctx, mustRESTConfig(t), "gpuform-system"); err != nil {
		t.Fatal(err)
	}
	var files []string
	err := filepath.WalkDir(deployDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) && filepath.Base(path) != "agent.yaml" && filepath.Base(path) != "gpuform-agent.yaml" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	objs := applyYAML(t, true, files...)
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()+" "+o.GetName()] = true
	}
	for _, want := range []string{"ServiceAccount gpuform-drift", "ClusterRoleBinding gpuform-drift", "CronJob gpuform-drift", "ClusterRole gpuform-plan", "ClusterRole gpuform-apply", "ClusterRole gpuform-drift"} {
		if !kinds[want] {
			t.Errorf("examples/deploy has no %s", want)
		}
	}
	// The CronJob runs drift read-only with the metrics file, bound to gpuform-drift.
	for _, o := range objs {
		switch o.GetKind() {
		case "CronJob":
			c, _, _ := unstructured.NestedSlice(o.Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(c[0].(map[string]any), "args")
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "jobTemplate", "spec", "template", "spec", "serviceAccountName")
			joined := strings.Join(args, " ")
			if sa != "gpuform-drift" || !strings.HasPrefix(joined, "drift --repo ") || !strings.Contains(joined, "--ref main") || !strings.Contains(joined, "--metrics-file /metrics/gpuform.prom") || strings.Contains(joined, "--fix") {
				t.Errorf("CronJob: service account %q, args %q", sa, joined)
			}
		case "ClusterRoleBinding":
			if name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); o.GetName() == "gpuform-drift" && name != "gpuform-drift" {
				t.Errorf("ClusterRoleBinding gpuform-drift binds %s", name)
			}
		}
	}
}
