package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planKeyEnv is an environment with a plan key, so fleet plans are signed.
var planKeyEnv = []string{"GPUFORM_PLAN_KEY=" + strings.Repeat("k", 40), "GPUFORM_REF=main"}

// fleetPlanFile is a fleet plan file as the tests take it apart.
type fleetPlanFile struct {
	FleetPlanVersion string            `json:"fleet_plan_version"`
	Members          []json.RawMessage `json:"members"`
}

// editPlan rewrites the fleet plan file at path with edit.
func editPlan(t *testing.T, path string, edit func(fp *fleetPlanFile)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fp fleetPlanFile
	if err := json.Unmarshal(b, &fp); err != nil {
		t.Fatal(err)
	}
	edit(&fp)
	b, err = json.Marshal(fp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFleetSavedPlan(t *testing.T) {
	tests := []struct {
		name string
		// planArgs are plan's flags besides --out.
		planArgs []string
		// change happens between plan and apply.
		change func(t *testing.T, f *testFleet, plan string)
		env    []string
		code   int
		want   string
	}{
		{"unchanged fleet applies", nil, nil, planKeyEnv, 0, "Fleet: 3 clusters applied, 0 failed."},
		{"member added", nil, func(t *testing.T, f *testFleet, _ string) { f.add(t, "north") }, planKeyEnv, 1,
			`Error: the fleet changed since the plan fleet.plan was made: cluster "north" was added. Make the plan again.`},
		{"member removed", nil, func(t *testing.T, f *testFleet, _ string) { f.members = f.members[:2] }, planKeyEnv, 1,
			`cluster "burst" was removed`},
		{"member configuration changed", nil, func(t *testing.T, f *testFleet, _ string) {
			f.edit(t, "east", `value = 1000`, `value = 2000`)
		}, planKeyEnv, 1, `the configuration of cluster "east" changed`},
		{"members reordered", nil, func(t *testing.T, f *testFleet, _ string) {
			f.members[0], f.members[1] = f.members[1], f.members[0]
		}, planKeyEnv, 1, "the clusters are in another order"},
		{"an unplanned member may change", []string{"--cluster", "west"}, func(t *testing.T, f *testFleet, _ string) {
			f.edit(t, "east", `value = 1000`, `value = 2000`)
		}, planKeyEnv, 0, "Fleet: 1 cluster applied, 0 failed."},
		{"member dropped from the file", nil, func(t *testing.T, _ *testFleet, plan string) {
			editPlan(t, plan, func(fp *fleetPlanFile) { fp.Members = fp.Members[1:] })
		}, planKeyEnv, 1, "it holds 2 member plans, and was made with 3"},
		{"members swapped in the file", nil, func(t *testing.T, _ *testFleet, plan string) {
			editPlan(t, plan, func(fp *fleetPlanFile) { fp.Members[0], fp.Members[1] = fp.Members[1], fp.Members[0] })
		}, planKeyEnv, 1, `member 1 is the plan of cluster "east" where the fleet plan has "west"`},
		{"member from another fleet plan", nil, func(t *testing.T, f *testFleet, plan string) {
			other := filepath.Join(f.root, "other.plan")
			if r := f.run(t, planKeyEnv, "plan", "--out", "other.plan"); r.code != 0 {
				t.Fatalf("plan: %d %s", r.code, r.stderr)
			}
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			var fp fleetPlanFile
			if err := json.Unmarshal(b, &fp); err != nil {
				t.Fatal(err)
			}
			editPlan(t, plan, func(mine *fleetPlanFile) { mine.Members[2] = fp.Members[2] })
		}, planKeyEnv, 1, "member 3 was not made in the same fleet plan as the others"},
		{"signed plan without the key", nil, nil, nil, 1, "the plan file is signed, but no plan key is configured"},
		{"signed plan on another ref", nil, nil, []string{planKeyEnv[0], "GPUFORM_REF=dev"}, 1, `was made from ref "main"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFleet(t, "west", "east", "burst")
			r := f.run(t, planKeyEnv, append([]string{"plan", "--out", "fleet.plan"}, tc.planArgs...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "Saved the fleet plan of") {
				t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if tc.change != nil {
				tc.change(t, f, filepath.Join(f.root, "fleet.plan"))
			}
			if tc.name == "unchanged fleet applies" {
				r := f.run(t, tc.env, "apply", "--auto-approve", "--cluster", "west", "fleet.plan")
				if r.code != 1 || !strings.Contains(r.stderr, "--cluster is not taken on a fleet: a saved fleet plan applies the members it was made for") {
					t.Fatalf("apply --cluster of a fleet plan: exit %d\n%s", r.code, r.stderr)
				}
			}
			r = f.run(t, tc.env, "apply", "--auto-approve", "fleet.plan")
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Fatalf("apply: exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
			if tc.code == 0 {
				return
			}
			// Refused before anything was applied: the fleet still plans changes.
			if strings.Contains(r.stdout, "Apply complete!") {
				t.Errorf("a refused fleet plan applied something:\n%s", r.stdout)
			}
		})
	}
}

// TestFleetPlanMemberAlone: one member's plan taken out of a fleet plan is
// refused by apply PLANFILE, which would otherwise apply it to whatever
// cluster the flags name.
func TestFleetPlanMemberAlone(t *testing.T) {
	f := newTestFleet(t, "west", "east")
	if r := f.run(t, nil, "plan", "--out", "fleet.plan"); r.code != 0 {
		t.Fatalf("plan: %d %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(f.root, "fleet.plan"))
	if err != nil {
		t.Fatal(err)
	}
	var fp fleetPlanFile
	if err := json.Unmarshal(b, &fp); err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(f.root, "east.plan")
	if err := os.WriteFile(alone, fp.Members[1], 0o600); err != nil {
		t.Fatal(err)
	}
	r := runGpuform(t, nil, "--chdir", f.root, "--simulated", filepath.Join(f.root, "east", "cluster.sim.hcl"), "apply", "--auto-approve", "east.plan")
	if r.code != 1 || !strings.Contains(r.stderr, `east.plan is the plan of cluster "east" taken out of a fleet plan`) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestFleetPlanNotSavedWithFailedMember: a fleet plan is saved only when
// every planned member has a plan apply could take.
func TestFleetPlanNotSavedWithFailedMember(t *testing.T) {
	f := newTestFleet(t, "west", "east")
	f.unreachable(t, "east")
	r := f.run(t, nil, "plan", "--out", "fleet.plan")
	if r.code != 1 || !strings.Contains(r.stderr, `the fleet plan was not saved to fleet.plan: cluster "east" has no plan apply could take (unreachable: `) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(f.root, "fleet.plan")); !os.IsNotExist(err) {
		t.Errorf("plan file written: %v", err)
	}
}
