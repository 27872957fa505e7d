package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gpuform graph prints the quickstart's planned changes as a DOT digraph,
// and refuses an invalid configuration as plan does.
func TestGraphCommand(t *testing.T) {
	dir := quickstartCopy(t)
	r := runGpuform(t, nil, "--no-color", "--chdir", dir, "graph")
	if r.code != 0 {
		t.Fatalf("graph: exit %d\n%s", r.code, r.stderr)
	}
	for _, w := range []string{`digraph "gpuform quickstart" {`, `"Node gpu-a100-0" -> "ConfigMap gpu-operator/gpuform-mig-parted";`, `"InferenceService serving/sentiment" -> "Namespace serving";`} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("graph lacks %q:\n%s", w, r.stdout)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("pool \"x\" {\n  gpu = \"NoSuchGPU\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "graph"); r.code != 1 || r.stdout != "" {
		t.Errorf("graph of an invalid configuration: exit %d, stdout %q", r.code, r.stdout)
	}
}

// The plan of the quickstart draws the MIG layout the first apply makes
// of the simulated nodes' GPUs, and the pool's capacity bar; inventory
// draws the GPUs after the apply.
func TestPicturesOnSimulatedCluster(t *testing.T) {
	dir := quickstartCopy(t)
	r := runGpuform(t, nil, "--no-color", "--chdir", dir, "plan")
	for _, w := range []string{
		"MIG layouts (now -> after this plan):",
		"gpu-a100-0, gpu-a100-1 (pool a100, A100-80GB, 2 nodes)",
		"    GPU 0-3  now    [MIG off: whole GPU            ]\n             after  [3g.40gb       ][3g.40gb       ]",
		"a100  nvidia.com/mig-3g.40gb  0 -> 16  0 -> 4  1          12    [#++++...............]",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("plan lacks %q:\n%s", w, r.stdout)
		}
	}
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	r = runGpuform(t, nil, "--no-color", "--chdir", dir, "inventory")
	if w := "gpu-a100-0, gpu-a100-1 (A100-80GB, 2 nodes)\n            0   1   2   3   4   5   6   7\n  GPU 0-3  [3g.40gb       ][3g.40gb       ]\n"; !strings.Contains(r.stdout, w) {
		t.Errorf("inventory lacks %q:\n%s", w, r.stdout)
	}
}
