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
// layout's after; the applied stack plans no change; plan says it found
// the GPU Operator's DRA stack beside the device plugin. When the L40S
// node runs the DRA stack too, plan refuses its device-plugin pool; when
// the A100 node does not run the DRA driver, the DRA pool; each says what
// to change.
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
		"  l40s  nvidia.com/gpu ",
		"GPU stack: the GPU Operator runs its DRA stack (GPUCluster gpu-cluster); NVIDIA's DRA driver publishes the GPUs of 1 node; the device plugin advertises nvidia.com resources on 1 node.")
	run(0, "apply", "--auto-approve")
	r = run(0, "plan", "--detailed-exitcode")
	contains(r,
		"  a100  gpuform-dra-a100-1g-10gb.deviceclass.resource.k8s.io/devices  8      4",
		"  a100  gpuform-dra-a100-3g-40gb.deviceclass.resource.k8s.io/devices  2      1")

	sim := filepath.Join(dir, "cluster.sim.hcl")
	src, _ := os.ReadFile(sim)
	edit := func(old, new string) {
		t.Helper()
		if !strings.Contains(string(src), old) {
			t.Fatalf("cluster.sim.hcl has no %q", old)
		}
		if err := os.WriteFile(sim, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The L40S node on the DRA stack too: its device-plugin pool is refused.
	edit(`"l40s" }`, `"l40s" }`+"\n  dra    = true")
	r = run(1, "plan")
	contains(r, "Error: Device-plugin pool on the DRA stack", "Pool l40s is a device-plugin pool", `Set mode = "dra" on the pool`)
	// The A100 node without the DRA driver: its DRA pool is refused.
	edit("dra    = true", "dra    = false")
	r = run(1, "plan")
	contains(r, "Error: DRA pool without devices", "none of the nodes it selects (gpu-a100-0) publishes a GPU in a", "kubelet plugin")
}
