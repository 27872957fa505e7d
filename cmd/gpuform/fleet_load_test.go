package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/stack"
)

// fleetExample copies examples/fleet into a temporary directory.
func fleetExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "examples", "fleet")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestFleetMembersLoadedOnce: the fleet commands load the configuration
// once for the listing and every member (config.LoadFleetDir), and each
// member's stack compiles the configuration loaded then, with the hash a
// load for the member alone gives (what a saved plan is checked against):
// once the members are listed, their stacks read no configuration file
// again, which a main.hcl broken after the listing shows.
func TestFleetMembersLoadedOnce(t *testing.T) {
	listings := []struct {
		name string
		list func(t *testing.T, g *globals) []fleetMember
	}{
		{"--cluster or --fleet-parallelism given (loadFleet)", func(t *testing.T, g *globals) []fleetMember {
			members, err := g.loadFleet(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return members
		}},
		{"found by the single-cluster path (fleetOf)", func(t *testing.T, g *globals) []fleetMember {
			st, done, err := g.newStack("", "", connection{})
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			_, err = st.Plan(context.Background(), stack.PlanOptions{})
			members := g.fleetOf(err)
			if members == nil {
				t.Fatalf("plan of the listing: %v, want the fleet's members", err)
			}
			return members
		}},
	}
	for _, tc := range listings {
		t.Run(tc.name, func(t *testing.T) {
			dir := fleetExample(t)
			var out, errb bytes.Buffer
			g := &globals{stdout: &out, stderr: &errb, chdir: dir}
			members := tc.list(t, g)
			if len(members) != 3 {
				t.Fatalf("%d members, want 3", len(members))
			}
			want := map[string]string{}
			for _, m := range members {
				alone, diags := config.LoadDir(dir, m.load)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				want[m.name] = alone.Hash
			}
			if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("tenant {\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, m := range members {
				r := g.member(m)
				st := r.memberStack(m, connection{})
				desired, err := st.Compile(context.Background())
				r.close()
				if err != nil {
					t.Fatalf("member %s loaded its configuration again: %v\n%s", m.name, err, r.stderr.String())
				}
				if len(desired.Objects) == 0 {
					t.Fatalf("member %s compiled no object", m.name)
				}
				if cfg := g.loadedMember(m); cfg == nil || cfg.Hash != want[m.name] {
					t.Fatalf("member %s: loaded with the fleet %v, want its hash %s", m.name, cfg, want[m.name])
				}
			}
		})
	}
}
