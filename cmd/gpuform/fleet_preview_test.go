package main

import (
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
)

// TestFleetPreview: plan --base on a fleet gives one section per member
// in fleet order and the fleet capacity table per tenant, names
// Markdown-escaped; an unreachable member is reported and exits 1.
func TestFleetPreview(t *testing.T) {
	f := newTestFleet(t, "west", "a|b", "burst")
	repo, err := gogit.PlainInit(f.root, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	commitAll(t, wt, "base", time.Unix(1700000000, 0))
	f.edit(t, "a|b", "quota \"a100\" {\n    slices = { \"3g.40gb\" = 2 }", "quota \"a100\" {\n    slices = { \"3g.40gb\" = 1 }")
	tests := []struct {
		name        string
		unreachable bool
		args        []string
		code        int
		want        []string
	}{
		{"markdown", false, []string{"--format", "markdown"}, 0, []string{
			"## Cluster `west`", "### gpuform plan for stack `quickstart`",
			"## Cluster `a\\|b`", "### gpuform plan for stack `quickstart`",
			"## Cluster `burst`",
			"## Fleet capacity per tenant",
			"| `research` | `west` | `a100` | 2 x 3g.40gb | 2 x 3g.40gb |",
			"| `research` | `a\\|b` | `a100` | 2 x 3g.40gb | **1 x 3g.40gb** |",
			"| `research` | `burst` | `a100` | 2 x 3g.40gb | 2 x 3g.40gb |",
			"| `serving` | `west` | `a100` |",
		}},
		{"text", false, nil, 0, []string{`Cluster "west":`, `Cluster "a|b":`, `Cluster "burst":`,
			"Fleet capacity per tenant", "    research on west, pool a100: 2 x 3g.40gb -> 2 x 3g.40gb", "  ~ research on a|b, pool a100: 2 x 3g.40gb -> 1 x 3g.40gb"}},
		{"unreachable member", true, []string{"--format", "markdown"}, 1, []string{"## Cluster `west`", "## Cluster `burst`", "No preview: unreachable: ", "## Fleet capacity per tenant", "| `research` | `a\\|b` |"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unreachable {
				f.unreachable(t, "burst")
			}
			r := f.run(t, nil, append([]string{"plan", "--base", "HEAD"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			inOrder(t, r.stdout, tc.want...)
			if tc.unreachable && strings.Contains(r.stdout, "| `burst` |") {
				t.Errorf("an unreachable member has capacity rows:\n%s", r.stdout)
			}
		})
	}
}
