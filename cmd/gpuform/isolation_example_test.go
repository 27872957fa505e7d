package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsolationExampleOnSimulatedCluster plans examples/isolation on its
// simulated cluster (golden plan: the tainted pool's ResourceFlavor and
// tolerations, the sandboxed tenant's annotation and admission policy, the
// autoscaled model), applies it, and plans again to nothing. On a copy of
// the cluster without RuntimeClass gvisor, and with a node of the tainted
// pool untainted, plan warns of both.
func TestIsolationExampleOnSimulatedCluster(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"isolation.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "isolation", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runGpuform(t, nil, "--no-color", "--chdir", dir, "plan", "--detailed-exitcode")
	if r.code != 2 {
		t.Fatalf("plan: exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	golden(t, filepath.Join("..", "..", "testdata", "plan", "isolation-create.txt"), strings.ReplaceAll(r.stdout, dir, "DIR"))
	if strings.Contains(r.stdout+r.stderr, "Warning") {
		t.Errorf("plan warns on the example's own cluster:\n%s", r.stderr)
	}
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "plan", "--detailed-exitcode"); r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
		t.Fatalf("plan after apply: exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	sim := filepath.Join(dir, "cluster.sim.hcl")
	src, err := os.ReadFile(sim)
	if err != nil {
		t.Fatal(err)
	}
	without := strings.Replace(string(src), `runtime_classes = ["gvisor"]`, `runtime_classes = ["kata"]`, 1)
	without = strings.Replace(without, `  taints = ["gpuform.dev/dedicated=secure:NoSchedule"]`+"\n", "", 1)
	if strings.Count(without, "taints = ") != 1 || strings.Contains(without, `"gvisor"`) {
		t.Fatal("examples/isolation/cluster.sim.hcl no longer declares RuntimeClass gvisor and two tainted nodes")
	}
	if err := os.WriteFile(sim, []byte(without), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runGpuform(t, nil, "--no-color", "--chdir", dir, "plan")
	for _, want := range []string{
		"Warning: RuntimeClass gvisor not found: tenant.payments's pods must run in it (runtime_class)",
		"Warning: Node gpu-h100-0 of pool.secure lacks taint gpuform.dev/dedicated=secure:NoSchedule: pods without its toleration can be scheduled there",
	} {
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("plan without RuntimeClass gvisor and a taint: exit %d, want 0 and %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "gpu-h100-1 of pool.secure lacks") {
		t.Errorf("plan warns of the node that has the taint:\n%s", r.stderr)
	}
}
