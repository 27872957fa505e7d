package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/internal/cliflags"
)

// testFleet is a fleet of quickstart copies, each on its own simulated
// cluster, standing in for the members a fleet configuration names.
type testFleet struct {
	root    string
	members []fleetMember
}

// newTestFleet makes one quickstart copy per name under one directory.
func newTestFleet(t testing.TB, names ...string) *testFleet {
	t.Helper()
	f := &testFleet{root: t.TempDir()}
	for _, n := range names {
		f.add(t, n)
	}
	return f
}

// add makes member name (a quickstart copy) the last of the fleet.
func (f *testFleet) add(t testing.TB, name string) {
	t.Helper()
	dir := filepath.Join(f.root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"main.hcl", "cluster.sim.hcl"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.members = append(f.members, fleetMember{name: name, dir: dir})
}

// edit replaces old with new in member name's main.hcl.
func (f *testFleet) edit(t *testing.T, name, old, new string) {
	t.Helper()
	path := filepath.Join(f.root, name, "main.hcl")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unreachable points member name at a simulated cluster file that does
// not exist: its configuration is valid, its cluster cannot be opened.
func (f *testFleet) unreachable(t *testing.T, name string) {
	t.Helper()
	f.edit(t, name, `simulated = "cluster.sim.hcl"`, `simulated = "gone.sim.hcl"`)
}

// run runs gpuform in-process on the fleet as its members are now, with
// --chdir the fleet's directory.
func (f *testFleet) run(t testing.TB, env []string, args ...string) result {
	t.Helper()
	members := append([]fleetMember(nil), f.members...)
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb, env: env,
		fleet: func(context.Context) ([]fleetMember, error) { return members, nil }}
	cmd := newRoot(g)
	cmd.SetArgs(cliflags.Normalize(cmd, append([]string{"--chdir", f.root, "--no-color"}, args...)))
	err := cmd.ExecuteContext(context.Background())
	return toResult(out.String(), errb.String(), err)
}

// inOrder fails unless every string of want occurs in s, in that order.
func inOrder(t *testing.T, s string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("want %q after offset %d in:\n%s", w, at, s)
		}
		at += i + len(w)
	}
}

func TestFleetPlan(t *testing.T) {
	quick := "19 to add, 3 to change, 0 to destroy"
	tests := []struct {
		name        string
		unreachable []string
		args        []string
		code        int
		want        []string
		absent      []string
	}{
		{"every member in fleet order", nil, []string{"plan"}, 0,
			[]string{`Cluster "west":`, "Plan: " + quick, `Cluster "east":`, `Cluster "burst":`, "Fleet: 3 clusters planned, 0 failed.", "  west   " + quick, "  east   " + quick, "  burst  " + quick}, nil},
		{"detailed exit code with changes", nil, []string{"plan", "--detailed-exitcode"}, 2, []string{"Fleet: 3 clusters planned"}, nil},
		{"selection keeps fleet order", nil, []string{"plan", "--cluster", "burst", "--cluster", "west"}, 0,
			[]string{`Cluster "west":`, `Cluster "burst":`, "Fleet: 2 clusters planned, 0 failed."}, []string{`Cluster "east":`}},
		{"unreachable member reported, others planned", []string{"east"}, []string{"plan", "--detailed-exitcode"}, 1,
			[]string{`Cluster "west":`, "Plan: " + quick, `Cluster "east":`, "No plan: unreachable: ", `Cluster "burst":`, "Plan: " + quick, "Fleet: 2 clusters planned, 1 failed.", "  east   unreachable: ", "gone.sim.hcl"}, nil},
		{"parallelism one gives the same output", []string{"east"}, []string{"plan", "--fleet-parallelism", "1"}, 1,
			[]string{`Cluster "west":`, `Cluster "east":`, `Cluster "burst":`, "  east   unreachable: "}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFleet(t, "west", "east", "burst")
			for _, n := range tc.unreachable {
				f.unreachable(t, n)
			}
			r := f.run(t, nil, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			inOrder(t, r.stdout, tc.want...)
			for _, a := range tc.absent {
				if strings.Contains(r.stdout, a) {
					t.Errorf("output has %q:\n%s", a, r.stdout)
				}
			}
		})
	}
}

// TestFleetPlanDeterministic: members finish in any order; the output is
// the same every time.
func TestFleetPlanDeterministic(t *testing.T) {
	f := newTestFleet(t, "a", "b", "c", "d", "e")
	f.unreachable(t, "c")
	first := f.run(t, nil, "plan")
	for range 3 {
		if r := f.run(t, nil, "plan"); r.stdout != first.stdout || r.stderr != first.stderr {
			t.Fatalf("plan output changed between runs:\n%s\n---\n%s", first.stdout, r.stdout)
		}
	}
}

// TestFleetConfigErrorBeforeClusters: a member whose configuration has an
// error ends the run with exit 1 and file:line:col before any member's
// cluster is opened (east's unreachable cluster is never tried).
func TestFleetConfigErrorBeforeClusters(t *testing.T) {
	f := newTestFleet(t, "west", "east", "burst")
	f.unreachable(t, "east")
	f.edit(t, "burst", `value = 1000`, `value = "many"`)
	for _, cmd := range [][]string{{"plan"}, {"apply", "--auto-approve"}} {
		r := f.run(t, nil, cmd...)
		if r.code != 1 {
			t.Fatalf("%v: exit %d, want 1\n%s\n%s", cmd, r.code, r.stdout, r.stderr)
		}
		inOrder(t, r.stderr, `Cluster "burst": the configuration evaluated for it has errors.`, "on main.hcl line 11")
		if strings.Contains(r.stdout+r.stderr, "unreachable") || strings.Contains(r.stdout, `Cluster "west"`) {
			t.Errorf("%v: a cluster was used before the configuration error ended the run:\n%s\n%s", cmd, r.stdout, r.stderr)
		}
	}
}

func TestFleetFlagsRefused(t *testing.T) {
	f := newTestFleet(t, "west", "east")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--context", "x"}, "--context is not taken on a fleet"},
		{[]string{"plan", "--simulated", "x.sim.hcl"}, "--simulated is not taken on a fleet"},
		{[]string{"plan", "--ref", "HEAD"}, "--ref is not taken on a fleet"},
		{[]string{"plan", "--cluster", "north"}, `--cluster north: no such member of the fleet (its members: west, east)`},
		{[]string{"plan", "--fleet-parallelism", "0"}, "--fleet-parallelism must be at least 1"},
		{[]string{"apply"}, "apply on a fleet asks no confirmation"},
	}
	for _, tc := range tests {
		r := f.run(t, nil, tc.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 1 and %q\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
	// On a single cluster, the fleet flags are refused.
	r := runGpuform(t, nil, "--chdir", quickstartCopy(t), "plan", "--cluster", "west")
	if r.code != 1 || !strings.Contains(r.stderr, "--cluster selects members of a fleet, and the configuration in") {
		t.Errorf("single cluster --cluster: exit %d\n%s", r.code, r.stderr)
	}
}

func TestFleetApply(t *testing.T) {
	f := newTestFleet(t, "west", "east", "burst")
	f.unreachable(t, "east")
	r := f.run(t, nil, "apply", "--auto-approve")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (east unreachable)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	inOrder(t, r.stdout, `Cluster "west":`, "Apply complete!", `Cluster "east":`, `Cluster "burst":`, "Apply complete!",
		"Fleet: 2 clusters applied, 1 failed.", "  west   22 applied, 0 failed, 0 skipped", "  east   unreachable: ", "  burst  22 applied, 0 failed, 0 skipped")
	// Rerun converges: west and burst have nothing to do, east is applied.
	f.edit(t, "east", `simulated = "gone.sim.hcl"`, `simulated = "cluster.sim.hcl"`)
	r = f.run(t, nil, "apply", "--auto-approve")
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	inOrder(t, r.stdout, "Fleet: 3 clusters applied, 0 failed.", "  west   no changes", "  east   22 applied, 0 failed, 0 skipped", "  burst  no changes")
	if r := f.run(t, nil, "plan", "--detailed-exitcode"); r.code != 0 {
		t.Fatalf("plan after apply: exit %d\n%s", r.code, r.stdout)
	}
}

// TestFleetPlanMarkdownEscapes: member names and failure reasons in the
// Markdown plan are Markdown-escaped.
func TestFleetPlanMarkdownEscapes(t *testing.T) {
	f := newTestFleet(t, "west", "a|b*")
	f.unreachable(t, "a|b*")
	r := f.run(t, nil, "plan", "--format", "markdown")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	inOrder(t, r.stdout, "## Cluster `west`", "## Cluster `a\\|b*`", "No plan: unreachable: cannot open the cluster: read simulated cluster ", "a\\|b\\*/gone.sim.hcl",
		"## Fleet: 1 cluster planned, 1 failed.", "| `west` | 19 to add, 3 to change, 0 to destroy |", "| `a\\|b*` | unreachable: ")
}

// TestFleetFoundByConnect: a configuration that names a fleet, loaded for
// none of its members, is never connected to: the command goes on over its
// members, each loaded for itself; a member's own configuration connects
// as a single cluster's does.
func TestFleetFoundByConnect(t *testing.T) {
	g := &globals{chdir: "conf", vars: []string{"x=1"}}
	fleetCfg := &config.Config{Fleet: []*config.Cluster{{Name: "west"}, {Name: "east"}}}
	_, err := g.connect(connection{})(context.Background(), fleetCfg)
	members := g.fleetOf(err)
	if len(members) != 2 {
		t.Fatalf("members %v (error %v)", members, err)
	}
	for i, want := range []string{"west", "east"} {
		m := members[i]
		if m.name != want || m.load.Cluster != want || m.dir != "conf" || len(m.load.Vars) != 1 {
			t.Errorf("member %d: %+v", i, m)
		}
	}
	memberCfg := &config.Config{Fleet: fleetCfg.Fleet, Cluster: &config.Cluster{Name: "west", Simulated: "gone.sim.hcl"}}
	_, err = g.connect(connection{})(context.Background(), memberCfg)
	if err == nil || g.fleetOf(err) != nil {
		t.Errorf("a member's configuration: %v", err)
	}
	if g.fleetOf(errors.New("other")) != nil {
		t.Error("fleetOf found a fleet in an unrelated error")
	}
}
