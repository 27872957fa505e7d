package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSharedExampleOnSimulatedCluster plans and applies examples/shared on
// its simulated cluster: the plan (golden testdata/plan/shared-create.txt)
// writes the MPS and renamed time-slicing configs, keeps nvidia.com/gpu
// and nvidia.com/gpu.shared apart in quotas, queues and capacity, pins the
// H200 pool's driver with an NVIDIADriver and sets the chat model's env;
// isolation.hcl's tainted pool, sandboxed tenant and autoscaled model sit
// beside them;
// the applied stack plans no change; a GPU Operator that does not manage
// drivers with NVIDIADrivers makes the pin a warning; a pin its nodes do
// not run fails the plan as a pin, not as "too old".
func TestSharedExampleOnSimulatedCluster(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"main.hcl", "isolation.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "shared", f))
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
	r := run(2, "plan", "--detailed-exitcode")
	golden(t, filepath.Join("..", "..", "testdata", "plan", "shared-create.txt"), strings.ReplaceAll(r.stdout, dir, "DIR"))
	for _, want := range []string{
		"Plan: 36 to add, 5 to change, 0 to destroy.",
		`spec.hard["requests.nvidia.com/gpu.shared"] = "12"`,
		`spec.predictor.model.resources.limits["nvidia.com/gpu.shared"] = "1"`,
		"  a30-shared  nvidia.com/gpu.shared  12     0 -> 12  1          0",
		"  h100-mps    nvidia.com/gpu         8      ? -> 8   2          0",
		"+ NVIDIADriver h200",
		// isolation.hcl: the tainted pool's toleration on its model and
		// Kueue flavor, the sandboxed tenant's runtime class, autoscaling.
		`+ spec.predictor.tolerations = [{"effect":"NoSchedule","key":"gpuform.dev/dedicated","operator":"Equal","value":"secure"}]`,
		`+ spec.tolerations = [{"effect":"NoSchedule","key":"gpuform.dev/dedicated","operator":"Equal","value":"secure"}]`,
		`+ spec.predictor.runtimeClassName = "gvisor"`,
		"+ spec.predictor.autoScaling.behavior.scaleDown.stabilizationWindowSeconds = 600",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, "Warning") {
		t.Errorf("the shared example's plan warns:\n%s", r.stdout)
	}
	run(0, "apply", "--auto-approve")
	run(0, "plan", "--detailed-exitcode")

	// A GPU Operator that does not manage drivers with NVIDIADrivers: the
	// pin would not be installed, which the plan says at the pool.
	sim := filepath.Join(dir, "cluster.sim.hcl")
	simSrc, _ := os.ReadFile(sim)
	if err := os.WriteFile(sim, []byte(strings.Replace(string(simSrc), "nvidia_driver_crd = true", "nvidia_driver_crd = false", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "cluster.sim.state.json")); err != nil {
		t.Fatal(err)
	}
	r = run(0, "plan")
	if !strings.Contains(r.stdout, "Warning: pool.h200 pins its driver with NVIDIADriver h200, but ClusterPolicy cluster-policy does not manage drivers with NVIDIADrivers") {
		t.Errorf("no warning about the GPU Operator ignoring the pin:\n%s", r.stdout)
	}

	main := filepath.Join(dir, "main.hcl")
	src, _ := os.ReadFile(main)
	if err := os.WriteFile(main, []byte(strings.Replace(string(src), `driver_version = "550.54.15"`, `driver_version = "550.54.14"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(1, "plan")
	if !strings.Contains(r.stderr, "Error: Driver not the pinned version") || !strings.Contains(r.stderr, "Pool h200 pins driver 550.54.14, but gpu-h200-0 (550.54.15)") {
		t.Errorf("a newer driver than the pin:\n%s", r.stderr)
	}
}
