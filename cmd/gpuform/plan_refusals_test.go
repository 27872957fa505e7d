package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
)

// Plan says what apply would refuse: a removed protected tenant is a
// warning of the plan (text and JSON), and a saved plan's apply command
// carries the flag it needs; apply of that file refuses without it, as
// the plan said.
func TestPlanSaysWhatApplyRefuses(t *testing.T) {
	dir := quickstartCopy(t)
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "apply", "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	main := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(src), `tenant "research" {`)
	j := strings.Index(string(src), `tenant "serving" {`)
	if i < 0 || j < i {
		t.Fatal("examples/quickstart changed: no tenant research before serving")
	}
	if err := os.WriteFile(main, append(src[:i:i], src[j:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	const warn = "Warning: Apply will refuse this plan"
	r := runGpuform(t, nil, "--no-color", "--chdir", dir, "plan", "--out", "removed.plan")
	if r.code != 0 || !strings.Contains(r.stdout, warn) || !strings.Contains(r.stdout, "the plan deletes the namespace of protected tenants: research (tenant.research)") ||
		!strings.Contains(r.stdout, "gpuform apply --allow-destroy removed.plan") {
		t.Errorf("plan --out: exit %d, want 0, %q and the apply command with --allow-destroy\n%s\n%s", r.code, warn, r.stdout, r.stderr)
	}
	j2 := runGpuform(t, nil, "--chdir", dir, "plan", "--json")
	var doc struct{ Warnings []string }
	if err := json.Unmarshal([]byte(j2.stdout), &doc); err != nil || !strings.Contains(strings.Join(doc.Warnings, "\n"), "Apply will refuse this plan") {
		t.Errorf("plan --json: warnings %q (%v), want the refusal", doc.Warnings, err)
	}
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "apply", "removed.plan"); r.code != 1 || !strings.Contains(r.stderr, "protected tenants") {
		t.Errorf("apply removed.plan: exit %d, want 1 and the refusal the plan announced\n%s", r.code, r.stderr)
	}
	if r := runGpuform(t, nil, "--no-color", "--chdir", dir, "apply", "--allow-destroy", "removed.plan"); r.code != 0 {
		t.Errorf("apply --allow-destroy removed.plan: exit %d\n%s", r.code, r.stderr)
	}
}

// plan --json on an invalid configuration prints validate --json's
// document on standard output (and the diagnostics on standard error).
func TestPlanJSONOnInvalidConfig(t *testing.T) {
	dir := filepath.Join(invalidDir, "mig-slice-count-zero")
	r := runGpuform(t, nil, "--chdir", dir, "plan", "--json")
	var doc config.JSONDiagnostics
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 || doc.Valid || doc.ErrorCount != 1 || doc.Diagnostics[0].Summary != "No instances of a MIG profile" {
		t.Errorf("plan --json: exit %d, %v, want 1 and one diagnostic\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
}
