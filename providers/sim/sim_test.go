package sim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/providers/sim"
)

const simFile = `
node "gpu-0" {
  gpu    = "A100-80GB"
  count  = 2
  labels = { "gpuform.dev/node-group" = "a100" }
}
node "cpu-0" {
  gpu    = "L40S"
  count  = 1
  labels = { "role" = "inference" }
}
`

// setup writes the quickstart configuration and a simulated cluster into a
// temp dir and returns the compiled configuration and the cluster file.
// openSim opens the simulated cluster described at path, with simulated GPUs.
func openSim(path string) (*sim.Cluster, error) {
	return sim.OpenIn(filepath.Dir(path), filepath.Base(path), sim.CatalogGPUs{})
}

func setup(t *testing.T) (*config.Config, *engine.Desired, string) {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": src}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cluster.sim.hcl")
	if err := os.WriteFile(path, []byte(simFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, d, path
}

func plan(t *testing.T, c *sim.Cluster, d *engine.Desired) *engine.Plan {
	t.Helper()
	live, err := c.Refresh(context.Background(), d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Diff(d, live, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyPersistsAndPartitions(t *testing.T) {
	cfg, d, path := setup(t)
	c, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, c, d)
	if p.Summary.Add != len(d.Objects) || p.Summary.Change != 2 {
		t.Fatalf("first plan: %+v, want %d adds and the node plus the ClusterPolicy", p.Summary, len(d.Objects))
	}
	if rep := engine.Apply(context.Background(), p, c, engine.ApplyOptions{}); !rep.OK() {
		for _, r := range rep.Results {
			if r.Err != nil {
				t.Errorf("%s: %v", r.Change.Key, r.Err)
			}
		}
		t.FailNow()
	}
	// A new process sees the applied state and plans no change.
	c2, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := plan(t, c2, d); p.HasChanges() {
		t.Fatalf("plan after apply, from a fresh Open: %+v", p.Summary)
	}
	live, _ := c2.Refresh(context.Background(), d, engine.RefreshOptions{})
	cat := mig.Default()
	want, err := mig.Solve(mustGPU(t, cat, "A100-80GB"), cfg.MIGLayouts[0].Slices)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range live.Nodes {
		if n.GetName() != "gpu-0" {
			if _, ok := n.GetAnnotations()[agentv1.AnnotInventory]; ok {
				t.Errorf("node %s without simulated NVML publishes an inventory", n.GetName())
			}
			continue
		}
		if got := n.GetLabels()[engine.LabelMIGState]; got != "success" {
			t.Errorf("%s = %q, want success", engine.LabelMIGState, got)
		}
		inv, err := agentv1.ParseInventory(n.GetAnnotations()[agentv1.AnnotInventory])
		if err != nil {
			t.Fatal(err)
		}
		if len(inv.GPUs) != 2 {
			t.Fatalf("inventory has %d GPUs, want 2", len(inv.GPUs))
		}
		for _, g := range inv.GPUs {
			if len(g.Instances) != len(want) {
				t.Fatalf("GPU %d has %d instances, want %d", g.Index, len(g.Instances), len(want))
			}
			for i, in := range g.Instances {
				if in.Profile != want[i].Profile || in.Start != want[i].Placement.Start || in.Size != want[i].Placement.Size {
					t.Errorf("GPU %d instance %d = %+v, want the solver's %+v", g.Index, i, in, want[i])
				}
			}
		}
		if inv := capacity.InventoryOf(n, cat); inv.Source != "agent" || inv.MIG["3g.40gb"] != 4 {
			t.Errorf("inventory of gpu-0: %+v", inv)
		}
	}
}

func mustGPU(t *testing.T, cat *mig.Catalog, key string) *mig.GPU {
	g, ok := cat.Lookup(key)
	if !ok {
		t.Fatalf("no %s in the catalog", key)
	}
	return g
}

func TestLockIsExclusive(t *testing.T) {
	_, _, path := setup(t)
	c, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	release, id, err := c.Lock(context.Background(), "quickstart", "me@here pid 1", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Lock(context.Background(), "quickstart", "other", 0)
	var held *engine.LockHeldError
	if !errors.As(err, &held) || held.ID != id || held.Holder != "me@here pid 1" {
		t.Fatalf("second lock: %v", err)
	}
	if err := c.ForceUnlock(context.Background(), "quickstart", "nope"); err == nil {
		t.Error("force-unlock with a wrong ID succeeded")
	}
	if err := release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Lock(context.Background(), "quickstart", "other", 0); err != nil {
		t.Errorf("lock after release: %v", err)
	}
}

func TestNodesAreNeverCreated(t *testing.T) {
	_, d, path := setup(t)
	c, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	live, _ := c.Refresh(context.Background(), d, engine.RefreshOptions{})
	ghost := live.Nodes[0].DeepCopy()
	ghost.SetName("gone")
	if err := c.ApplyNode(context.Background(), ghost, "", "gpuform-quickstart"); err == nil {
		t.Error("labelling a node that does not exist succeeded")
	}
}

func TestBadClusterFiles(t *testing.T) {
	for name, src := range map[string]string{
		"unknown gpu": `node "a" { gpu = "Z9000" count = 1 }`,
		"no gpus":     `node "a" { gpu = "A100-80GB" count = 0 }`,
		"duplicate":   `node "a" { gpu = "T4" count = 1 } node "a" { gpu = "T4" count = 1 }`,
		"syntax":      `node "a" {`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.sim.hcl")
			_ = os.WriteFile(path, []byte(src), 0o644)
			if _, err := openSim(path); err == nil {
				t.Error("accepted")
			}
		})
	}
	_, _, path := setup(t)
	state := filepath.Join(filepath.Dir(path), "cluster.sim.state.json")
	_ = os.WriteFile(state, []byte("{"), 0o644)
	if _, err := openSim(path); err == nil {
		t.Error("a damaged state file was accepted")
	}
}

// The same simulated node reads the same every time the cluster is opened:
// a saved plan records each Node's version, and go-nvml's random GPU UUIDs
// made every plan of the simulated cluster stale at once.
func TestNodesReadTheSameOnEveryOpen(t *testing.T) {
	_, d, path := setup(t)
	versions := func() map[string]string {
		c, err := openSim(path)
		if err != nil {
			t.Fatal(err)
		}
		live, err := c.Refresh(context.Background(), d, engine.RefreshOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range live.Nodes {
			out[n.GetName()] = engine.NodeVersion(n)
		}
		return out
	}
	first, second := versions(), versions()
	if len(first) != 2 {
		t.Fatalf("%d nodes, want 2", len(first))
	}
	for name, v := range first {
		if second[name] != v {
			t.Errorf("node %s read %s, then %s on the next open", name, v, second[name])
		}
	}
	// The GPUs of a node have distinct UUIDs, and so do those of two nodes.
	seen := map[string]string{}
	for _, node := range []string{"gpu-0", "gpu-1"} {
		for i := range 8 {
			u := agentv1.SimulatedUUID(node, i)
			if other, dup := seen[u]; dup {
				t.Errorf("GPU %d of %s has the UUID of %s: %s", i, node, other, u)
			}
			seen[u] = fmt.Sprintf("GPU %d of %s", i, node)
			if !uuidRE.MatchString(u) {
				t.Errorf("UUID %q is not GPU- and a UUID", u)
			}
		}
	}
}

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// A missing simulated file is named and said not to exist; an unreadable
// one's diagnostics never print "<nil>" for a diagnostic without a place.
func TestOpenErrorsNameTheFileWithoutNil(t *testing.T) {
	dir := t.TempDir()
	_, err := sim.OpenIn(dir, "missing.hcl", sim.CatalogGPUs{})
	if err == nil {
		t.Fatal("no error for a missing file")
	}
	for _, want := range []string{filepath.Join(dir, "missing.hcl"), "does not exist", "--simulated FILE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.txt"), []byte("node \"a\" {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = sim.OpenIn(dir, "cluster.txt", sim.CatalogGPUs{})
	if err == nil || strings.Contains(err.Error(), "<nil>") || !strings.Contains(err.Error(), "cluster.txt") {
		t.Errorf("error for an unsupported suffix = %v, want one naming the file without <nil>", err)
	}
}
