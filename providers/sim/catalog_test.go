package sim_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/stack"
	"github.com/gpuform/gpuform/providers/sim"
)

// poolConfig is a stack with one pool of the GPU model key, partitioned as
// NVIDIA's all-balanced layout (slices), and a tenant with a quota of one
// instance of profile.
func poolConfig(key string, slices map[string]int, profile string) string {
	var b strings.Builder
	parts := make([]string, 0, len(slices))
	for _, name := range sortedKeys(slices) {
		parts = append(parts, fmt.Sprintf("%q = %d", name, slices[name]))
	}
	fmt.Fprintf(&b, `gpuform {
  stack = "catalog"
}

cluster {
  simulated = "cluster.sim.hcl"
}

priority "standard" {
  value = 1000
}

mig_layout "balanced" {
  gpu    = %[1]q
  slices = { %[2]s }
}

pool "gpus" {
  gpu        = %[1]q
  mig_layout = mig_layout.balanced
}

tenant "research" {
  quota "gpus" {
    slices = { %[3]q = 1 }
  }
  priorities       = [priority.standard]
  default_priority = priority.standard
}
`, key, strings.Join(parts, ", "), profile)
	return b.String()
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// TestPoolOfEveryGPUPlansAndApplies: a pool of each MIG GPU of the catalog
// (the GPUs of NVIDIA's default mig-parted configuration among them)
// validates, plans, applies and re-plans with no change on the simulated
// cluster, partitioned as NVIDIA's all-balanced layout: go-nvml's simulated
// GPUs where it has the model, GPU Feature Discovery labels elsewhere.
func TestPoolOfEveryGPUPlansAndApplies(t *testing.T) {
	type poolCase struct {
		name    string
		g       *mig.GPU
		layout  map[string]int
		profile string
		gpu     string // the configuration's gpu argument; "" for the key
	}
	var cases []poolCase
	for _, g := range mig.Default().GPUs() {
		if !g.MIG {
			continue
		}
		layout := mig.OperatorConfigs(g)[mig.OperatorAllBalanced]
		if len(layout) == 0 {
			t.Fatalf("%s: no all-balanced layout", g.Key)
		}
		cases = append(cases, poolCase{g.Key, g, layout, sortedKeys(layout)[0], ""})
		if g.Key == "RTX-PRO-6000-96GB" {
			// The profile variants, through quotas and the device plugin's
			// resource names (nvidia.com/mig-1g.24gb.me.all, ...-me).
			cases = append(cases,
				poolCase{g.Key + "/me.all", g, map[string]int{"1g.24gb+me.all": 1, "1g.24gb-me": 3}, "1g.24gb+me.all", ""},
				poolCase{g.Key + "/gfx", g, map[string]int{"2g.48gb+gfx": 1, "2g.48gb-me": 1}, "2g.48gb-me", ""})
		}
		if g.Key == "H100-80GB" {
			// An H800 named by its PCI device ID in the configuration.
			cases = append(cases, poolCase{g.Key + "/by-device-id", g, layout, sortedKeys(layout)[0], "0x2324"})
		}
	}
	ctx := context.Background()
	for _, tc := range cases {
		g, layout := tc.g, tc.layout
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cluster := fmt.Sprintf("node %q {\n  gpu = %q\n  count = 2\n  labels = { \"gpuform.dev/node-group\" = \"gpus\" }\n}\n", "gpu-0", g.Key)
			writeFile(t, filepath.Join(dir, "cluster.sim.hcl"), cluster)
			gpu := g.Key
			if tc.gpu != "" {
				gpu = tc.gpu
			}
			writeFile(t, filepath.Join(dir, "main.hcl"), poolConfig(gpu, layout, tc.profile))
			open := func() stack.Cluster {
				c, err := openSim(filepath.Join(dir, "cluster.sim.hcl"))
				if err != nil {
					t.Fatal(err)
				}
				return sim.StackCluster(c)
			}
			res, err := stack.New(stack.Dir(dir), stack.Using(open()), stack.Options{}).Plan(ctx, stack.PlanOptions{})
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if !res.Plan.HasChanges() || res.Plan.Capacity == nil || len(res.Plan.Capacity.Rows) == 0 {
				t.Fatalf("plan: %+v, capacity %+v", res.Plan.Summary, res.Plan.Capacity)
			}
			opts := stack.ApplyOptions{Safety: engine.SafetyOptions{MaxDeletes: engine.DefaultMaxDeletes}, LockHolder: "test"}
			ap, err := stack.New(stack.Dir(dir), stack.Using(open()), stack.Options{}).Apply(ctx, opts)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if !ap.OK() {
				for _, r := range ap.Report.Results {
					if r.Err != nil {
						t.Errorf("apply %s: %v", r.Change.Key, r.Err)
					}
				}
				t.FailNow()
			}
			again, err := stack.New(stack.Dir(dir), stack.Using(open()), stack.Options{}).Plan(ctx, stack.PlanOptions{})
			if err != nil || again.Plan.HasChanges() {
				t.Fatalf("plan after apply: %v, %+v", err, again)
			}
		})
	}
}

// TestSimulatedInventoryIsTheCatalogs: on the simulated cluster every
// catalog GPU reports the catalog's memory, in GPU Feature Discovery's
// nvidia.com/gpu.memory label and, where go-nvml simulates the model, in
// the agent's inventory annotation (issue 18: the catalog said 81559 MiB
// for an H100 80GB, the simulated inventory 81920).
func TestSimulatedInventoryIsTheCatalogs(t *testing.T) {
	cat := mig.Default()
	var b strings.Builder
	for i, g := range cat.GPUs() {
		fmt.Fprintf(&b, "node \"n%d\" {\n  gpu = %q\n  count = 1\n}\n", i, g.Key)
	}
	path := filepath.Join(t.TempDir(), "cluster.sim.hcl")
	writeFile(t, path, b.String())
	c, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	live, err := c.Refresh(context.Background(), &engine.Desired{}, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Nodes) != len(cat.GPUs()) {
		t.Fatalf("%d nodes, want %d", len(live.Nodes), len(cat.GPUs()))
	}
	simulated := 0
	for _, n := range live.Nodes {
		i, _ := strconv.Atoi(strings.TrimPrefix(n.GetName(), "n"))
		g := cat.GPUs()[i]
		if got := n.GetLabels()["nvidia.com/gpu.memory"]; got != strconv.Itoa(g.MemoryMiB) {
			t.Errorf("%s: label nvidia.com/gpu.memory %s, catalog %d", g.Key, got, g.MemoryMiB)
		}
		a := n.GetAnnotations()[agentv1.AnnotInventory]
		if a == "" {
			if sim.CanSimulate(cat, g.Key) {
				t.Errorf("%s: no inventory annotation though go-nvml simulates it", g.Key)
			}
			continue
		}
		simulated++
		inv, err := agentv1.ParseInventory(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range inv.GPUs {
			if d.MemoryMiB != g.MemoryMiB || d.Model != g.Key {
				t.Errorf("%s: the simulated inventory says %s with %d MiB, the catalog %d MiB", g.Key, d.Model, d.MemoryMiB, g.MemoryMiB)
			}
		}
	}
	if simulated != 6 {
		t.Errorf("%d models simulated by go-nvml, want 6 (A30, A100-40GB, A100-80GB, H100-80GB, H200, B200)", simulated)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
