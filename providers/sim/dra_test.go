package sim_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/mig"
)

// draDevices lists the DRA devices of node in live as type/profile names.
func draDevices(live *engine.Live, node string) []string {
	var out []string
	for _, d := range live.DRA.Nodes[node] {
		out = append(out, d.Type+"/"+d.Profile)
	}
	slices.Sort(out)
	return out
}

// TestSimulatedDRADriver: on examples/dra's simulated cluster, the node of
// the DRA stack publishes its 2 A100s as NVIDIA's DRA driver does, whole
// before the apply and as the layout's MIG devices after it (from a fresh
// open), and advertises no nvidia.com/gpu; the device plugin's node
// publishes no slice. Capacity reads the DRA pool from the slices.
func TestSimulatedDRADriver(t *testing.T) {
	dir := t.TempDir()
	example := filepath.Join("..", "..", "examples", "dra")
	for _, f := range []string{"main.hcl", "cluster.sim.hcl"} {
		b, err := os.ReadFile(filepath.Join(example, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
	cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": src}, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cluster.sim.hcl")
	c, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	live, err := c.Refresh(context.Background(), d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := draDevices(live, "gpu-a100-0"); !live.DRA.Served || !slices.Equal(got, []string{"gpu/", "gpu/"}) {
		t.Errorf("before the apply: DRA devices %v (served %v), want 2 whole GPUs", got, live.DRA.Served)
	}
	if _, ok := live.DRA.Nodes["gpu-l40s-0"]; ok {
		t.Error("the device plugin's node publishes a ResourceSlice")
	}
	for _, n := range live.Nodes {
		_, has := n.Object["status"].(map[string]any)["capacity"].(map[string]any)[engine.ResourceGPU]
		if want := n.GetName() == "gpu-l40s-0"; has != want {
			t.Errorf("node %s advertises nvidia.com/gpu: %v, want %v", n.GetName(), has, want)
		}
	}
	p, err := engine.Diff(d, live, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := engine.Apply(context.Background(), p, c, engine.ApplyOptions{}); !rep.OK() {
		t.Fatalf("apply: %+v", rep.Results)
	}
	c2, err := openSim(path)
	if err != nil {
		t.Fatal(err)
	}
	live, err = c2.Refresh(context.Background(), d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mig/1g.10gb", "mig/1g.10gb", "mig/1g.10gb", "mig/1g.10gb", "mig/1g.10gb", "mig/1g.10gb", "mig/1g.10gb", "mig/1g.10gb", "mig/3g.40gb", "mig/3g.40gb"}
	if got := draDevices(live, "gpu-a100-0"); !slices.Equal(got, want) {
		t.Errorf("after the apply: DRA devices %v, want the layout's on 2 GPUs %v", got, want)
	}
	rep, diags := capacity.CheckFrom(cfg, live.Nodes, live.DRA, nil, mig.Default())
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	rows := 0
	for _, r := range rep.Rows {
		if r.Pool == "a100" {
			rows++
			if r.TotalBefore != r.Total || r.Total == 0 {
				t.Errorf("row %+v: the devices published now are not the layout's", r)
			}
		}
	}
	if rows != 2 {
		t.Errorf("capacity rows %+v, want the a100 pool's 2 DeviceClasses", rep.Rows)
	}
}
