package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoOnSimulatedCluster runs what make demo runs, on a copy of the
// quickstart and its simulated cluster: no cluster, no GPU. The plan is
// saved and the saved file applied, the CI flow: the simulated nodes read
// the same every time (their GPUs' UUIDs), so the plan is not stale.
func TestDemoOnSimulatedCluster(t *testing.T) {
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
	steps := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"plan", "--detailed-exitcode", "--out", "quickstart.plan"}, 2, []string{"Plan: 19 to add, 3 to change, 0 to destroy.", "+ PrometheusRule monitoring/gpuform-quickstart-pool-a100", "+ PrometheusRule monitoring/gpuform-quickstart-tenant-serving", "a100  nvidia.com/mig-3g.40gb  0 -> 16  0 -> 4  1          12", "Saved the plan to quickstart.plan"}},
		{[]string{"apply", "quickstart.plan"}, 0, []string{"pool.a100: Modifications complete after", "Apply complete! Resources: 19 added, 3 changed, 0 destroyed."}},
		{[]string{"plan", "--detailed-exitcode"}, 0, []string{"No changes."}},
		{[]string{"inventory"}, 0, []string{"gpu-a100-0  A100-80GB  4      550.54.15  8 x 3g.40gb    agent"}},
	}
	for _, s := range steps {
		r := runGpuform(t, nil, append([]string{"--no-color", "--chdir", dir}, s.args...)...)
		if r.code != s.code {
			t.Fatalf("gpuform %s: exit %d, want %d\n%s\n%s", strings.Join(s.args, " "), r.code, s.code, r.stdout, r.stderr)
		}
		for _, w := range s.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("gpuform %s: output lacks %q:\n%s", strings.Join(s.args, " "), w, r.stdout)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster.sim.state.json")); err != nil {
		t.Errorf("no state file beside the simulated cluster: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster.sim.state.json.lock")); !os.IsNotExist(err) {
		t.Errorf("the lock file was left behind: %v", err)
	}
}
