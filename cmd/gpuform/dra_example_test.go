package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDRAExampleOnSimulatedCluster plans examples/dra on its simulated
// cluster, whose A100 node publishes its GPUs as NVIDIA's DRA driver does:
// the DRA pool's capacity is its DeviceClasses' devices, none before the
// apply re-partitions (the node's 2 GPUs are published whole), the
// layout's after; the applied stack plans no change. When the node does
// not run the DRA driver, plan refuses the DRA pool and says what to check.
func TestDRAExampleOnSimulatedCluster(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"main.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "dra", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(code int, args ...string) result {
		t.Helper()
		r := runGpuform(t, nil, append([]string{"--no-color", "--chdir", dir}, args...)...)
		if r.code != code {
			t.Fatalf("gpuform %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
		return r
	}
	contains := func(r result, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(r.stdout+r.stderr, want) {
				t.Errorf("output lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
			}
		}
	}
	r := run(2, "plan", "--detailed-exitcode")
	contains(r,
		"  a100  gpuform-dra-a100-1g-10gb.deviceclass.resource.k8s.io/devices  0 -> 8  0 -> 4",
		"  a100  gpuform-dra-a100-3g-40gb.deviceclass.resource.k8s.io/devices  0 -> 2  0 -> 1",
		"  l40s  nvidia.com/gpu ")
	run(0, "apply", "--auto-approve")
	r = run(0, "plan", "--detailed-exitcode")
	contains(r,
		"  a100  gpuform-dra-a100-1g-10gb.deviceclass.resource.k8s.io/devices  8      4",
		"  a100  gpuform-dra-a100-3g-40gb.deviceclass.resource.k8s.io/devices  2      1")

	sim := filepath.Join(dir, "cluster.sim.hcl")
	src, _ := os.ReadFile(sim)
	if err := os.WriteFile(sim, []byte(strings.Replace(string(src), "dra    = true", "dra    = false", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(1, "plan")
	contains(r, "Error: DRA pool without devices", "none of the nodes it selects (gpu-a100-0) publishes a GPU in a", "kubelet plugin")
}
