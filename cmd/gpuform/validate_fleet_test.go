package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate checks a fleet for every cluster, with one summary line each in
// the fleet's order.
func TestValidateFleetSummaryPerMember(t *testing.T) {
	r := runGpuform(t, nil, "--chdir", filepath.Join("..", "..", "examples", "fleet"), "--no-color", "validate")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("validate: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	want := "Success! The configuration is valid.\n\n" +
		"Cluster eu-train: Stack fleet: 2 priorities, 0 MIG layouts, 1 pool, 3 tenants, 0 models.\n" +
		"Cluster us-train: Stack fleet: 2 priorities, 0 MIG layouts, 1 pool, 2 tenants, 0 models.\n" +
		"Cluster burst: Stack fleet: 2 priorities, 0 MIG layouts, 1 pool, 1 tenant, 1 model.\n"
	if r.stdout != want {
		t.Errorf("validate printed\n%s\nwant\n%s", r.stdout, want)
	}
}

// A problem the checks find on one member only (a namespace made of that
// member's values) fails validate, at its file:line:col, naming the member.
func TestValidateFleetErrorOnOneMember(t *testing.T) {
	dir := t.TempDir()
	src := `gpuform {
  stack = "s"
}

cluster "good" {
  values = { suffix = "ok" }
}

cluster "bad" {
  values = { suffix = "NOT_OK" }
}

pool "a" {
  gpu = "A100-80GB"
}

tenant "t" {
  namespace = "t-${cluster.values.suffix}"
  quota "a" {
    gpus = 1
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runGpuform(t, nil, "--chdir", dir, "--no-color", "validate")
	if r.code != 1 {
		t.Fatalf("validate: exit %d; want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "on main.hcl line 18") || !strings.Contains(r.stderr, `(Evaluated for cluster "bad".)`) || strings.Contains(r.stderr, `"good"`) {
		t.Errorf("validate stderr does not name line 18 and cluster bad alone:\n%s", r.stderr)
	}
}
