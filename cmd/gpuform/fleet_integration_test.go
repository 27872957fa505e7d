package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFleetOnRealClusters: members on a real API server, each reached
// through its own cluster block, applied at once under their own locks;
// a member whose API server refuses connections is reported unreachable
// and the others converge.
func TestFleetOnRealClusters(t *testing.T) {
	setupCluster(t)
	kc, err := os.ReadFile(srv.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dead := regexp.MustCompile(`server: \S+`).ReplaceAll(kc, []byte("server: https://127.0.0.1:1"))
	if string(dead) == string(kc) {
		t.Fatal("no server in the harness kubeconfig")
	}
	f := &testFleet{root: t.TempDir()}
	for _, m := range []struct {
		name, stack string
		kubeconfig  []byte
	}{{"alpha", "fleet-alpha", kc}, {"down", "fleet-down", dead}, {"beta", "fleet-beta", kc}} {
		dir := filepath.Join(f.root, m.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(tenantsConfig(t, m.stack, 2), "main.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, "\ncluster {\n  kubeconfig = \"kubeconfig\"\n}\n"...)
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), m.kubeconfig, 0o600); err != nil {
			t.Fatal(err)
		}
		f.members = append(f.members, fleetMember{name: m.name, dir: dir})
	}
	r := f.run(t, nil, "--allow-config-kubeconfig", "apply", "--auto-approve")
	if r.code != 1 {
		t.Fatalf("apply: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	inOrder(t, r.stdout, `Cluster "alpha":`, "Apply complete!", `Cluster "down":`, `Cluster "beta":`, "Apply complete!",
		"Fleet: 2 clusters applied, 1 failed.", "  alpha  ", " applied, 0 failed, 0 skipped", "  down   unreachable: ", "  beta   ")
	if strings.Contains(r.stdout, "  beta   failed") {
		t.Fatalf("beta failed:\n%s", r.stdout)
	}
	r = f.run(t, nil, "--allow-config-kubeconfig", "plan", "--detailed-exitcode", "--cluster", "alpha", "--cluster", "beta")
	if r.code != 0 {
		t.Fatalf("plan after apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	inOrder(t, r.stdout, "Fleet: 2 clusters planned, 0 failed.", "  alpha  no changes", "  beta   no changes")
	r = f.run(t, nil, "--allow-config-kubeconfig", "plan")
	if r.code != 1 {
		t.Fatalf("plan with the member down: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	inOrder(t, r.stdout, "Fleet: 2 clusters planned, 1 failed.", "  alpha  no changes", "  down   unreachable: ", "connection refused", "  beta   no changes")
}
