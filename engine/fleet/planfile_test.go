package fleet_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/fleet"
)

// memberPlans are empty saved plans of the named members.
func memberPlans(names ...string) []*engine.PlanFile {
	var pfs []*engine.PlanFile
	for _, n := range names {
		pfs = append(pfs, &engine.PlanFile{FormatVersion: engine.PlanFileVersion, Stack: "s", ConfigHash: "h-" + n, ReadVersions: map[string]string{}, Fleet: &engine.FleetBinding{Member: n}})
	}
	return pfs
}

func TestPlanFileRoundTrip(t *testing.T) {
	key := engine.PlanKey(strings.Repeat("k", 40))
	var b bytes.Buffer
	if err := fleet.WritePlan(&b, memberPlans("west", "burst"), []string{"west", "east", "burst"}, key); err != nil {
		t.Fatal(err)
	}
	if !fleet.IsPlan(b.Bytes()) {
		t.Fatal("IsPlan is false for a fleet plan")
	}
	pfs, err := fleet.ReadPlan(b.Bytes(), key)
	if err != nil {
		t.Fatal(err)
	}
	bind := pfs[1].Fleet
	if bind.Member != "burst" || strings.Join(bind.Fleet, ",") != "west,east,burst" || len(bind.Planned) != 2 || bind.Planned[1].ConfigHash != "h-burst" || bind.ID == "" || bind.ID != pfs[0].Fleet.ID {
		t.Errorf("binding %+v", bind)
	}
	if _, err := fleet.ReadPlan(b.Bytes(), engine.PlanKey(strings.Repeat("x", 40))); err == nil || !strings.Contains(err.Error(), "member 1 of the fleet plan") {
		t.Errorf("another key: %v", err)
	}
}

func TestChanged(t *testing.T) {
	bind := &engine.FleetBinding{Fleet: []string{"west", "east", "burst"}, Planned: []engine.FleetMemberHash{{Name: "west", ConfigHash: "1"}, {Name: "east", ConfigHash: "2"}}}
	tests := []struct {
		members []string
		hashes  map[string]string
		want    string
	}{
		{[]string{"west", "east", "burst"}, map[string]string{"west": "1", "east": "2"}, ""},
		{[]string{"west", "east", "burst", "north"}, map[string]string{"west": "1", "east": "2"}, `cluster "north" was added`},
		{[]string{"west", "east"}, map[string]string{"west": "1", "east": "2"}, `cluster "burst" was removed`},
		{[]string{"west", "east", "burst"}, map[string]string{"west": "1", "east": "3"}, `the configuration of cluster "east" changed`},
		{[]string{"east", "west", "burst"}, map[string]string{"west": "1", "east": "2"}, "the clusters are in another order"},
	}
	for _, tc := range tests {
		if got := fleet.Changed(bind, tc.members, tc.hashes); got != tc.want {
			t.Errorf("%v %v: %q, want %q", tc.members, tc.hashes, got, tc.want)
		}
	}
}
