package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// execBase is a small valid stack; execHead adds a cluster block that names
// a kubeconfig committed beside it, as a pull request can.
const (
	execBase = "gpuform {\n  stack = \"trust-exec\"\n}\n\npriority \"p\" {\n  value = 10\n}\n"
	execHead = execBase + "\ncluster {\n  kubeconfig = \"ci/kubeconfig.yaml\"\n}\n"
)

// execKubeconfig is a kubeconfig whose credential plugin, if anything ran
// it, would create the file MARKER (and fail, so nothing waits on it).
const execKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /bin/sh
      args: ["-c", "touch 'MARKER'; exit 1"]
      interactiveMode: Never
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`

// A configuration cannot make gpuform run a program (issue 15, item 2).
// A pull request adds a cluster block naming a kubeconfig with an exec
// credential plugin; before, plan --base in the PR-preview job ran the
// plugin with the CI's environment (the cluster block wins over
// $KUBECONFIG). Now no run from a pull request or a git ref reads that
// kubeconfig, flag or not, nor does any run without
// --allow-config-kubeconfig: the plugin never runs, the run exits 1 before
// any cluster call, and the error names the block's line and what to do.
// With --kubeconfig the preview works and the block's kubeconfig is
// ignored; only an operator's --allow-config-kubeconfig on a plain plan
// runs the plugin.
func TestConfigurationCannotRunPrograms(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "repo")
	marker := filepath.Join(parent, "marker")
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	base := commitConfig(t, wt, dir, execBase, "base")
	if err := wt.Checkout(&gogit.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	kc := strings.ReplaceAll(execKubeconfig, "MARKER", marker)
	if err := os.WriteFile(filepath.Join(dir, "ci", "kubeconfig.yaml"), []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("ci/kubeconfig.yaml"); err != nil {
		t.Fatal(err)
	}
	commitConfig(t, wt, dir, execHead, "a pull request that names a kubeconfig")

	t.Setenv("KUBERNETES_SERVICE_HOST", "") // drift would try a pod's service account first
	// The CI job's own kubeconfig, which the block would override.
	env := []string{"KUBECONFIG=" + srv.Kubeconfig}
	const where = "main.hcl:10,16-36: "
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"plan --base", []string{"plan", "--base", base}, []string{where, "may not choose the kubeconfig", "Pass --kubeconfig FILE"}},
		{"plan --base --allow-config-kubeconfig", []string{"plan", "--base", base, "--allow-config-kubeconfig"}, []string{"even with --allow-config-kubeconfig"}},
		{"plan --ref", []string{"plan", "--ref", "feature", "--allow-config-kubeconfig"}, []string{"may not choose the kubeconfig"}},
		{"drift --repo", []string{"drift", "--repo", dir, "--ref", "feature"}, []string{"may not choose the kubeconfig"}},
		{"plan", []string{"plan"}, []string{where, "only with --allow-config-kubeconfig", "can run programs", "Pass --kubeconfig FILE"}},
		{"apply", []string{"apply", "--auto-approve"}, []string{"only with --allow-config-kubeconfig"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(marker)
			r := runGpuform(t, env, append([]string{"--chdir", dir, "--no-color"}, tt.args...)...)
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the kubeconfig's exec plugin ran (exit %d)\nstderr:\n%s", r.code, r.stderr)
			}
			if r.code != 1 {
				t.Errorf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}

	t.Run("plan --base --kubeconfig", func(t *testing.T) {
		_ = os.Remove(marker)
		r := runGpuform(t, nil, "--chdir", dir, "--kubeconfig", srv.Kubeconfig, "plan", "--base", base, "--detailed-exitcode")
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the kubeconfig's exec plugin ran")
		}
		if r.code != 2 || !strings.Contains(r.stdout, "priority.p") {
			t.Fatalf("exit %d, want 2 and a plan adding priority.p\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("plan --allow-config-kubeconfig", func(t *testing.T) {
		_ = os.Remove(marker)
		r := runGpuform(t, env, "--chdir", dir, "--allow-config-kubeconfig", "plan")
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("the operator allowed the block's kubeconfig, yet its plugin did not run (exit %d)\nstderr:\n%s", r.code, r.stderr)
		}
	})
}
