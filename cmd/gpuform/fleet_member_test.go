package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFleetOneMemberCommands: the commands that work on one cluster refuse
// a fleet without --cluster, naming its members, and work on the member
// --cluster names. render reads no cluster, so it used to print nothing and
// exit 0 on a fleet.
func TestFleetOneMemberCommands(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "fleet")
	const refusal = "fleet of 3 clusters (eu-train, us-train, burst); this command works on one: name it with --cluster NAME"
	tests := []struct {
		args      []string
		code      int
		stdout    []string
		notStdout []string
		stderr    string
	}{
		{args: []string{"render"}, code: 1, stderr: refusal},
		{args: []string{"graph"}, code: 1, stderr: refusal},
		{args: []string{"destroy", "--auto-approve"}, code: 1, stderr: refusal},
		{args: []string{"state", "list"}, code: 1, stderr: refusal},
		{args: []string{"inventory"}, code: 1, stderr: refusal},
		// The h100 pool is placed on burst only, the a100 pool on the
		// training clusters only.
		{args: []string{"render", "--cluster", "burst"}, stdout: []string{"name: h100"}, notStdout: []string{"name: a100"}},
		{args: []string{"render", "--cluster", "eu-train"}, stdout: []string{"name: a100"}, notStdout: []string{"name: h100"}},
		{args: []string{"graph", "--cluster", "burst"}, stdout: []string{"digraph"}},
		{args: []string{"render", "--cluster", "nowhere"}, code: 1, stderr: `There is no cluster "nowhere" in this fleet`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runGpuform(t, nil, append([]string{"--chdir", dir}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.stderr != "" && !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, r.stderr)
			}
			if tc.code != 0 && r.stdout != "" {
				t.Errorf("refused, and printed:\n%s", r.stdout)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q", s)
				}
			}
			for _, s := range tc.notStdout {
				if strings.Contains(r.stdout, s) {
					t.Errorf("stdout has %q, placed on another member", s)
				}
			}
		})
	}
}
