package render_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/engine/render"
)

// One GPU drawn in its memory slots: boxes as wide as their placements,
// short names where the full one does not fit, free slots as empty boxes.
func TestDrawGPU(t *testing.T) {
	in := func(p string, start, size int) mig.Instance {
		return mig.Instance{Profile: p, Placement: mig.Placement{Start: start, Size: size}}
	}
	for _, tt := range []struct {
		name  string
		slots int
		inst  []mig.Instance
		want  string
	}{
		{"halves", 8, []mig.Instance{in("3g.40gb", 0, 4), in("3g.40gb", 4, 4)}, "[3g.40gb       ][3g.40gb       ]"},
		{"mixed with free slots", 8, []mig.Instance{in("3g.40gb", 0, 4), in("1g.10gb", 5, 1), in("1g.10gb", 6, 1)}, "[3g.40gb       ][  ][1g][1g][  ]"},
		{"two-slot short name", 8, []mig.Instance{in("2g.20gb", 0, 2), in("1g.20gb", 2, 2)}, "[2g    ][1g    ][  ][  ][  ][  ]"},
		{"media extensions", 8, []mig.Instance{in("1g.10gb+me", 0, 1)}, "[1g][  ][  ][  ][  ][  ][  ][  ]"},
		{"empty A30", 4, nil, "[  ][  ][  ][  ]"},
		{"whole GPU", 8, []mig.Instance{in("7g.80gb", 0, 8)}, "[7g.80gb                       ]"},
		{"more slots than a GPU has", 1 << 30, []mig.Instance{in("7g.80gb", 0, 1<<30)}, "(1073741824 memory slots: not drawn)"},
		{"out of range and overlap left out", 4, []mig.Instance{in("2g.12gb", 2, 4), in("2g.12gb", 0, 2), in("1g.6gb", 1, 1)}, "[2g    ][  ][  ]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.DrawGPU(tt.slots, tt.inst); got != tt.want {
				t.Errorf("DrawGPU = %q, want %q", got, tt.want)
			}
		})
	}
}

// agentNode is a GPU Feature Discovery node of the quickstart's a100 pool
// with the agent's inventory: each GPU's instances as profile@start.
func agentNode(t *testing.T, name string, gpus [][]string) *unstructured.Unstructured {
	t.Helper()
	n := enginetest.GPUNode(name, "a100", "NVIDIA-A100-SXM4-80GB", len(gpus), "550.54.15")
	inv := agentv1.Inventory{Version: agentv1.InventoryVersion, DriverVersion: "550.54.15"}
	g := mig.Default()
	model, _ := g.Lookup("A100-80GB")
	for i, list := range gpus {
		gpu := agentv1.GPU{Index: i, UUID: "GPU-" + name + string(rune('a'+i)), Name: "NVIDIA A100-SXM4-80GB", Model: "A100-80GB", MemoryMiB: model.MemoryMiB, MIGCapable: true, MIGEnabled: len(list) > 0}
		for j, spec := range list {
			prof, start, _ := strings.Cut(spec, "@")
			p, _ := model.Profile(prof)
			gpu.Instances = append(gpu.Instances, agentv1.GPUInstance{ID: j + 1, Instance: agentv1.Instance{Profile: prof, Start: int(start[0] - '0'), Size: p.MemorySlices}})
		}
		inv.GPUs = append(inv.GPUs, gpu)
	}
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	n.SetAnnotations(map[string]string{agentv1.AnnotInventory: string(b)})
	return n
}

// repartitionPlan is the quickstart re-laid out from halves to a mixed
// layout, on two agent nodes (one GPU of one MIG-off) and a GPU Feature
// Discovery node (counts only).
func repartitionPlan(t *testing.T) *engine.Plan {
	cfg := enginetest.LoadExample(t, "quickstart", "gpu    = \"A100-80GB\"\n  slices = { \"3g.40gb\" = 2 }", "gpu    = \"A100-80GB\"\n  slices = { \"3g.40gb\" = 1, \"2g.20gb\" = 1, \"1g.10gb\" = 1 }")
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	live := enginetest.Applied(t, d)
	halves := []string{"3g.40gb@0", "3g.40gb@4"}
	gfd := enginetest.GPUNode("gpu-a100-2", "a100", "NVIDIA-A100-SXM4-80GB", 4, "550.54.15")
	gfd.Object["metadata"].(map[string]any)["labels"].(map[string]any)["nvidia.com/mig-3g.40gb.count"] = "8"
	live.Nodes = []*unstructured.Unstructured{
		agentNode(t, "gpu-a100-0", [][]string{halves, halves, halves, nil}),
		agentNode(t, "gpu-a100-1", [][]string{halves, halves, halves, nil}),
		gfd,
	}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	p.Repartitions = capacity.Repartitions(cfg, live.Nodes, live.DRA, engine.RepartitionedNodes(p), mig.Default())
	p.Capacity, _ = capacity.CheckFrom(cfg, live.Nodes, live.DRA, nil, mig.Default())
	return p
}

// A re-partition is drawn before -> after in the text and Markdown plans
// and at the top of the PR preview, nodes that draw the same grouped.
func TestRenderRepartitionGolden(t *testing.T) {
	p := repartitionPlan(t)
	if len(p.Repartitions) != 3 {
		t.Fatalf("repartitions = %+v, want 3 nodes", p.Repartitions)
	}
	pv := &engine.Preview{Plan: p, CapacityBefore: []capacity.Row{{Pool: "a100", Resource: "nvidia.com/mig-3g.40gb", Total: 24, Quota: 4, Requested: 1, Limit: 24}}}
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"repartition.txt", func(b *bytes.Buffer) error { return render.Text(b, p, render.TextOptions{}) }},
		{"repartition.md", func(b *bytes.Buffer) error { return render.Markdown(b, p) }},
		{"repartition-preview.md", func(b *bytes.Buffer) error { _, err := b.WriteString(render.PreviewMarkdown(pv)); return err }},
	} {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			t.Fatal(err)
		}
		golden(t, "plan/"+f.name, buf.String())
	}
	md := render.PreviewMarkdown(pv)
	if d, c := strings.Index(md, "MIG layouts"), strings.Index(md, "1. Configuration changes"); d < 0 || d > c {
		t.Errorf("the PR preview does not draw the MIG layouts before its sections:\n%s", md)
	}
}

// inventory draws each node's GPUs in their memory slots under its table:
// the agent's real placements, GPU Feature Discovery's counts placed by the
// solver (and said so), nothing for a model without MIG; nodes that draw
// the same under one heading.
func TestRenderInventoryGolden(t *testing.T) {
	cat := mig.Default()
	gfd := enginetest.GPUNode("gpu-a100-2", "a100", "NVIDIA-A100-SXM4-80GB", 2, "")
	gfd.Object["metadata"].(map[string]any)["labels"].(map[string]any)["nvidia.com/mig-1g.10gb.count"] = "14"
	var nodes []capacity.NodeInventory
	for _, n := range []*unstructured.Unstructured{
		agentNode(t, "gpu-a100-0", [][]string{{"3g.40gb@0", "3g.40gb@4"}, {"3g.40gb@4", "1g.10gb@0", "1g.10gb@2"}, nil}),
		gfd,
		agentNode(t, "gpu-a100-1", [][]string{{"3g.40gb@0", "3g.40gb@4"}, {"3g.40gb@4", "1g.10gb@0", "1g.10gb@2"}, nil}),
		enginetest.GPUNode("gpu-l4-0", "l4", "NVIDIA-L4", 8, "550.54.15"),
	} {
		nodes = append(nodes, capacity.InventoryOf(n, cat))
	}
	var b bytes.Buffer
	if err := render.Inventory(&b, nodes); err != nil {
		t.Fatal(err)
	}
	golden(t, "inventory.txt", b.String())
}

// The catalog draws every placement of a profile over the memory slots.
func TestRenderCatalogGolden(t *testing.T) {
	cat := mig.Default()
	var gpus []*mig.GPU
	for _, k := range []string{"A30-24GB", "A100-80GB", "L4"} {
		g, ok := cat.Lookup(k)
		if !ok {
			t.Fatalf("no %s in the catalog", k)
		}
		gpus = append(gpus, g)
	}
	var b bytes.Buffer
	if err := render.Catalog(&b, gpus); err != nil {
		t.Fatal(err)
	}
	golden(t, "catalog.txt", b.String())
}

// A capacity bar shows requests, the rest of the quotas, free capacity and
// what is beyond the limit, over the largest figure.
func TestCapacityBar(t *testing.T) {
	for _, tt := range []struct {
		name string
		row  capacity.Row
		want string
	}{
		{"requested within quota within capacity", capacity.Row{Total: 20, Limit: 20, Quota: 12, Requested: 6}, "[######++++++........]"},
		{"all free", capacity.Row{Total: 16, Limit: 16}, "[....................]"},
		{"exactly at capacity", capacity.Row{Total: 10, Limit: 10, Quota: 10, Requested: 10}, "[####################]"},
		{"quota over the limit", capacity.Row{Total: 10, Limit: 10, Quota: 20, Requested: 5}, "[#####+++++!!!!!!!!!!]"},
		{"overcommit allows beyond capacity", capacity.Row{Total: 10, Limit: 20, Quota: 15}, "[+++++++++++++++     ]"},
		{"nothing at all", capacity.Row{}, "[                    ]"},
		{"a small request still shows", capacity.Row{Total: 112, Limit: 145, Quota: 99, Requested: 3}, "[#+++++++++++++.     ]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.CapacityBar(tt.row, 20); got != tt.want {
				t.Errorf("CapacityBar = %q, want %q", got, tt.want)
			}
		})
	}
}

// A saved plan keeps its drawings for show, and what it says is drawn
// within bounds whatever it says.
func TestRepartitionsInPlanFile(t *testing.T) {
	p := repartitionPlan(t)
	pf, err := engine.NewPlanFile(p, "test", "hash", "ctx", false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pf.WriteSigned(&buf, nil); err != nil {
		t.Fatal(err)
	}
	back, err := engine.ReadPlanFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	shown := back.Plan()
	var want, got bytes.Buffer
	_ = render.Text(&want, p, render.TextOptions{})
	_ = render.Text(&got, shown, render.TextOptions{})
	if !strings.Contains(got.String(), "GPU 0-3  now    [3g.40gb       ][3g.40gb       ]") {
		t.Errorf("the saved plan does not draw the re-partition:\n%s", got.String())
	}
	shown.Repartitions[0].After[0].Slots = 1 << 40
	got.Reset()
	_ = render.Text(&got, shown, render.TextOptions{})
	if !strings.Contains(got.String(), "memory slots: not drawn") {
		t.Errorf("a plan file's slot count was drawn:\n%s", got.String())
	}
}

// draRepartitionPlan is examples/dra re-laid out, on two nodes of its DRA
// pool whose GPUs are what NVIDIA's DRA driver publishes: gpu-a100-0 as
// the driver names its devices (a MIG GPU, index 0, whose device names
// give each placement, listed after a whole GPU, index 1, with MIG off),
// gpu-a100-1 with MIG devices named otherwise (counts, placed by the
// solver). The nodes' labels claim 8 GPUs: the drawing does not read them.
func draRepartitionPlan(t *testing.T) *engine.Plan {
	t.Helper()
	cfg := enginetest.LoadExample(t, "dra", "gpu    = \"A100-80GB\"\n  slices = { \"1g.10gb\" = 4, \"3g.40gb\" = 1 }\n}", "gpu    = \"A100-80GB\"\n  slices = { \"1g.10gb\" = 2, \"2g.20gb\" = 1, \"3g.40gb\" = 1 }\n}")
	d, err := compile.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	live := enginetest.Applied(t, d)
	const product = "NVIDIA A100-SXM4-80GB"
	migDev := func(name, profile string) capacity.DRADevice {
		return capacity.DRADevice{Node: "gpu-a100-0", Name: name, Type: capacity.DRATypeMIG, Profile: profile, Product: product, GPU: "GPU-a100-0-0"}
	}
	driverNamed := []capacity.DRADevice{
		{Node: "gpu-a100-0", Name: "gpu-1", Type: capacity.DRATypeGPU, Product: product, GPU: "GPU-a100-0-1"},
		migDev("gpu-0-mig-9-4-4", "3g.40gb"),
		migDev("gpu-0-mig-19-0-1", "1g.10gb"), migDev("gpu-0-mig-19-1-1", "1g.10gb"),
		migDev("gpu-0-mig-19-2-1", "1g.10gb"), migDev("gpu-0-mig-19-3-1", "1g.10gb"),
	}
	gv := engine.KindResourceSlice.GroupVersion().String()
	live.DRA = capacity.DRADevicesOf([]*unstructured.Unstructured{
		capacity.DRASlice(gv, "gpu-a100-0", driverNamed),
		capacity.DRASlice(gv, "gpu-a100-1", capacity.DRAGPU("gpu-a100-1", product, 0, []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "3g.40gb"})),
	}, true)
	live.Nodes = []*unstructured.Unstructured{
		enginetest.GPUNode("gpu-a100-0", "a100", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
		enginetest.GPUNode("gpu-a100-1", "a100", "NVIDIA-A100-SXM4-80GB", 8, "550.54.15"),
	}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	p.Repartitions = capacity.Repartitions(cfg, live.Nodes, live.DRA, engine.RepartitionedNodes(p), mig.Default())
	return p
}

// A DRA pool's node is drawn from its ResourceSlices: the driver's GPUs
// by index, MIG instances at the placements their names give (or solved
// from counts, and said so), a whole GPU with MIG off; not the 8 GPUs its
// labels claim.
func TestRenderDRARepartitionGolden(t *testing.T) {
	p := draRepartitionPlan(t)
	if len(p.Repartitions) != 2 {
		t.Fatalf("repartitions = %+v, want 2 nodes", p.Repartitions)
	}
	if b := p.Repartitions[0].Before; len(b) != 2 || b[0].Index != 0 || !b[0].MIG || b[0].Solved || b[1].Index != 1 || b[1].MIG {
		t.Errorf("gpu-a100-0 now = %+v, want GPU 0 in MIG as placed, GPU 1 whole", b)
	}
	if b := p.Repartitions[1].Before; len(b) != 1 || !b[0].Solved || len(b[0].Instances) != 5 {
		t.Errorf("gpu-a100-1 now = %+v, want one GPU of 5 solved instances", b)
	}
	var buf bytes.Buffer
	if err := render.Text(&buf, p, render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan/repartition-dra.txt", buf.String())
}
