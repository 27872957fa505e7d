package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// examples/bank, the richest example, plans and applies as copied: its
// cluster block names a simulated cluster of its own, and a second plan
// finds nothing to do.
func TestBankExampleOnSimulatedCluster(t *testing.T) {
	dir := t.TempDir()
	names, err := filepath.Glob(filepath.Join("..", "..", "examples", "bank", "*.hcl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("examples/bank: %v", err)
	}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runGpuform(t, nil, "--no-color", "plan", dir, "--detailed-exitcode")
	if r.code != 2 || !strings.Contains(r.stdout, "Cluster: simulated cluster "+filepath.Join(dir, "cluster.sim.hcl")) ||
		!strings.Contains(r.stdout, "Plan: 49 to add, 5 to change, 0 to destroy.") {
		t.Fatalf("plan examples/bank: exit %d, want 2 and 49 to add on its simulated cluster\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runGpuform(t, nil, "--no-color", "apply", dir, "--auto-approve"); r.code != 0 {
		t.Fatalf("apply examples/bank: exit %d\n%s", r.code, r.stderr)
	}
	if r := runGpuform(t, nil, "--no-color", "plan", dir, "--detailed-exitcode"); r.code != 0 {
		t.Errorf("plan after apply: exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
