package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quickstartCopy copies examples/quickstart's configuration and simulated
// cluster into a fresh directory.
func quickstartCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"main.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// validate takes what a Terraform or kubectl user passes first: a
// directory, or .hcl files (whose directory is read); anything else says
// what to pass.
func TestValidateArgs(t *testing.T) {
	dir := quickstartCopy(t)
	other := quickstartCopy(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", dir}, 0, "Success!"},
		{[]string{"validate", filepath.Join(dir, "main.hcl")}, 0, "Success!"},
		{[]string{"validate", filepath.Join(dir, "main.hcl"), filepath.Join(dir, "cluster.sim.hcl")}, 0, "Success!"},
		{[]string{"--chdir", dir, "validate", "main.hcl"}, 0, "Success!"},
		{[]string{"validate", filepath.Join(dir, "main.hcl"), filepath.Join(other, "main.hcl")}, 1, "are different directories: gpuform reads every *.hcl file of one directory"},
		{[]string{"validate", filepath.Join(dir, "missing")}, 1, "missing does not exist: pass the configuration's directory"},
		{[]string{"validate", filepath.Join(dir, "README")}, 1, "does not exist"},
	} {
		r := runGpuform(t, nil, append([]string{"--no-color"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.want) {
			t.Errorf("gpuform %s: exit %d, want %d and %q\n%s\n%s", strings.Join(tt.args, " "), r.code, tt.code, tt.want, r.stdout, r.stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runGpuform(t, nil, "validate", filepath.Join(dir, "notes.txt"))
	if r.code != 1 || !strings.Contains(r.stderr, "is not a .hcl file or a directory") {
		t.Errorf("validate notes.txt: exit %d\n%s", r.code, r.stderr)
	}
}

// drift --fix --auto-approve is apply's habit: accepted, and a no-op since
// --fix applies without asking; without --fix it is refused, saying why.
func TestDriftAutoApprove(t *testing.T) {
	dir := quickstartCopy(t)
	r := runGpuform(t, nil, "--no-color", "--chdir", dir, "drift", "--auto-approve")
	if r.code != 1 || !strings.Contains(r.stderr, "--auto-approve applies to drift --fix only: without --fix, drift only reports and never writes") {
		t.Errorf("drift --auto-approve: exit %d, want 1 and a refusal\n%s", r.code, r.stderr)
	}
	r = runGpuform(t, nil, "--no-color", "--chdir", dir, "drift", "--fix", "--auto-approve")
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete!") || !strings.Contains(r.stdout, "No drift.") {
		t.Errorf("drift --fix --auto-approve: exit %d, want 0 after applying\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// With no kubeconfig at all and no simulated cluster, plan says no
// kubeconfig was found and how to try gpuform without a cluster.
func TestPlanWithoutKubeconfig(t *testing.T) {
	dir := quickstartCopy(t)
	main := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	noCluster := regexp.MustCompile(`(?s)\ncluster \{.*?\n\}\n`).ReplaceAll(src, []byte("\n"))
	if string(noCluster) == string(src) {
		t.Fatal("the quickstart has no cluster block to remove")
	}
	if err := os.WriteFile(main, noCluster, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	r := runGpuform(t, []string{"KUBECONFIG=" + missing}, "--no-color", "--chdir", dir, "plan")
	for _, want := range []string{"no kubeconfig found", missing, "--simulated FILE", "simulated in the cluster block"} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("plan without a kubeconfig: exit %d, want 1 and %q\n%s", r.code, want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "current context") {
		t.Errorf("plan without a kubeconfig still speaks of a current context:\n%s", r.stderr)
	}
}
