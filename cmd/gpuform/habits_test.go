package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// What a Terraform user types works: single-dash long flags, --version,
// and the configuration's directory as plan's, apply's and drift's
// argument; an unknown single-dash word gets a hint with two dashes, and
// today's spellings keep working.
func TestTerraformHabits(t *testing.T) {
	for _, tt := range []struct {
		name string
		args func(dir string) []string
		code int
		want string
	}{
		{"-var", func(dir string) []string {
			return []string{"-chdir=" + dir, "plan", "-var", "nope=1"}
		}, 1, `--var sets "nope", but no variable`},
		{"-var=", func(dir string) []string { return []string{"-chdir", dir, "plan", "-var=nope=1"} }, 1, `--var sets "nope", but no variable`},
		{"--var still", func(dir string) []string { return []string{"--chdir", dir, "plan", "--var", "nope=1"} }, 1, `--var sets "nope", but no variable`},
		{"plan DIR", func(dir string) []string { return []string{"plan", dir} }, 0, "Plan: "},
		{"plan -out", func(dir string) []string {
			return []string{"plan", dir, "-out", filepath.Join(dir, "p.plan")}
		}, 0, "Saved the plan to"},
		{"apply DIR -auto-approve", func(dir string) []string { return []string{"apply", dir, "-auto-approve"} }, 0, "Apply complete!"},
		{"apply DIR --auto-approve", func(dir string) []string { return []string{"apply", dir, "--auto-approve"} }, 0, "Apply complete!"},
		{"drift DIR", func(dir string) []string { return []string{"drift", dir} }, 2, "unapplied"},
		{"plan DIR --repo", func(dir string) []string { return []string{"plan", dir, "--repo", dir} }, 1, "both name the configuration"},
		{"unknown -foo", func(dir string) []string { return []string{"plan", dir, "-foo"} }, 1, "long flags take two dashes: --foo"},
		{"-v stays verbosity", func(dir string) []string { return []string{"-v", "1", "plan", dir} }, 0, "Plan: "},
		{"value after -out untouched", func(dir string) []string {
			return []string{"plan", dir, "-out", "-var"}
		}, 0, "Saved the plan to -var"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := quickstartCopy(t)
			args := append([]string{"--no-color"}, tt.args(dir)...)
			r := runGpuform(t, nil, args...)
			if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Errorf("gpuform %s: exit %d, want %d and %q\n%s\n%s", strings.Join(args, " "), r.code, tt.code, tt.want, r.stdout, r.stderr)
			}
		})
	}
}

// --version prints what gpuform version prints.
func TestVersionFlag(t *testing.T) {
	v := runGpuform(t, nil, "version")
	r := runGpuform(t, nil, "--version")
	if r.code != 0 || v.code != 0 || r.stdout != v.stdout || !strings.HasPrefix(r.stdout, "gpuform ") {
		t.Errorf("--version: exit %d %q, want %q", r.code, r.stdout, v.stdout)
	}
}
