package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// tenantAdmin is a clientset acting as a member of group, an admins entry
// of a tenant (tenantsConfig's "group:team-<key>"): it holds only what
// gpuform's RoleBinding grants, the namespace admin role.
func tenantAdmin(t *testing.T, group string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate.UserName = "mallory"
	cfg.Impersonate.Groups = []string{group, "system:authenticated"}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestTenantCannotForgeOwnership acts as a tenant's admin against what
// decides the stack's ownership: RoleBindings in its own namespace forged
// with the stack's labels, field manager gpuform and another tenant's
// address are left in place and reported, never deleted or counted as
// anyone's changes, and no apply fails on --max-deletes for them; a commit
// stamp the tenant writes on a RoleBinding it edited does not make its
// live edit look unapplied. Before, the forged objects were planned as the
// other tenant's deletes (every apply stopped at --max-deletes) and the
// stamp turned the live edit into "unapplied".
func TestTenantCannotForgeOwnership(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	const stack = "forge"
	dir := tenantsConfig(t, stack, 2)
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	c1 := commitAll(t, wt, "two tenants", time.Unix(1700000000, 0))
	applyOK(t, nil, dir)
	ns := stack + "-0000"
	mallory := tenantAdmin(t, "team-0000")

	// The tenant may not write the record.
	if _, err := mallory.CoreV1().ConfigMaps(engine.LockNamespace).List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatalf("the tenant's admin may read %s", engine.LockNamespace)
	}

	var forged []string
	for i := range 11 {
		name := fmt.Sprintf("forged-%02d", i)
		forged = append(forged, name)
		rb := rbacv1ac.RoleBinding(name, ns).
			WithLabels(map[string]string{engine.LabelStack: stack, engine.LabelManagedBy: engine.ManagedByValue}).
			WithAnnotations(map[string]string{engine.AnnotAddress: `tenant.t["0001"]`, engine.AnnotCommit: c1}).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName("view")).
			WithSubjects(rbacv1ac.Subject().WithKind("User").WithAPIGroup(rbacv1.GroupName).WithName("mallory"))
		if _, err := mallory.RbacV1().RoleBindings(ns).Apply(ctx, rb, metav1.ApplyOptions{FieldManager: engine.FieldManager, Force: true}); err != nil {
			t.Fatalf("the tenant's admin forges RoleBinding %s: %v", name, err)
		}
	}

	t.Run("plan reports the forgeries and deletes none", func(t *testing.T) {
		r := runWith(t, nil, "--chdir", dir, "plan", "--detailed-exitcode")
		if r.code != 0 {
			t.Errorf("plan: exit %d, want 0 (no changes)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		out := r.stdout + r.stderr
		for _, name := range forged {
			if !strings.Contains(out, "RoleBinding "+ns+"/"+name+" carries the label gpuform.dev/stack=forge, but is not in the stack's inventory: left in place, not deleted") {
				t.Errorf("no warning about the forged RoleBinding %s:\n%s", name, out)
			}
		}
		if strings.Contains(out, "destroy") && !strings.Contains(out, "0 to destroy") {
			t.Errorf("plan destroys something:\n%s", out)
		}
	})
	t.Run("apply succeeds without --allow-destroy and leaves them", func(t *testing.T) {
		r := runWith(t, nil, "--chdir", dir, "apply", "--auto-approve", "--max-deletes", "1")
		if r.code != 0 {
			t.Fatalf("apply: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		cs := clientset(t)
		for _, name := range forged {
			if _, err := cs.RbacV1().RoleBindings(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("the forged RoleBinding %s: %v, want it left in place", name, err)
			}
		}
	})

	t.Run("a commit stamp written by the tenant changes no drift class", func(t *testing.T) {
		// A commit never merged (the tenant's own branch) whose
		// configuration has the tenant's edit: the stamp the tenant
		// writes names it.
		main := filepath.Join(dir, "main.hcl")
		src, err := os.ReadFile(main)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(src), `admins           = ["group:team-${each.key}"]`, `admins           = ["group:team-${each.key}", "user:mallory-friend"]`, 1)
		if edited == string(src) {
			t.Fatal("the configuration has no admins to edit")
		}
		if err := os.WriteFile(main, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		unmerged := commitAll(t, wt, "the tenant's branch", time.Unix(1700000100, 0))
		if err := wt.Reset(&gogit.ResetOptions{Commit: plumbing.NewHash(c1), Mode: gogit.HardReset}); err != nil {
			t.Fatal(err)
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"team-0000"},{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"mallory-friend"}]}`, engine.AnnotCommit, unmerged)
		if _, err := mallory.RbacV1().RoleBindings(ns).Patch(ctx, "gpuform-admins", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatalf("the tenant's admin edits its admins RoleBinding: %v", err)
		}
		metrics := filepath.Join(t.TempDir(), "gpuform.prom")
		_, d := runDrift(t, nil, 2, "--chdir", dir, "--metrics-file", metrics)
		wantCounts(t, d, 1, 0, 0, 0)
		if len(d.Drift) == 1 && (d.Drift[0].Class != "live-edit" || d.Drift[0].Name != "gpuform-admins" || d.Drift[0].AppliedCommit != c1) {
			t.Errorf("item = %+v, want the admins RoleBinding a live edit applied from %s", d.Drift[0], c1)
		}
		if m := readMetrics(t, metrics); !strings.Contains(m, `gpuform_drift_objects{stack="forge",class="live-edit"} 1`+"\n") {
			t.Errorf("the live-edit metric:\n%s", m)
		}
	})
}

// TestNodeClaimedByAnotherStack: two stacks whose pools have the same name
// and select the same node write the same labels, which server-side apply
// lets both own without a conflict; the second stack's plan refuses the
// node. Before, the check was skipped for a node whose labels already
// matched, and both stacks promised its GPUs.
func TestNodeClaimedByAnotherStack(t *testing.T) {
	setupCluster(t)
	first := tenantsConfig(t, "claim", 1)
	applyOK(t, nil, first)
	second := t.TempDir()
	src := `gpuform {
  stack = "claim-b"
}

pool "claim" {
  gpu           = "H100-80GB"
  node_selector = { "gpuform.dev/node-group" = "claim" }
}

tenant "other" {
  namespace = "claim-b-other"
  quota "claim" {
    gpus = 1
  }
  protect = false
}
`
	if err := os.WriteFile(filepath.Join(second, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, nil, "--chdir", second, "plan")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "node claim-gpu-0 is already in a pool of gpuform stack claim") {
		t.Errorf("plan of the second stack: exit %d, want 1 and the node refused\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, nil, "--chdir", second, "apply", "--auto-approve")
	if r.code == 0 {
		t.Errorf("apply of the second stack succeeded:\n%s", r.stdout)
	}
}
