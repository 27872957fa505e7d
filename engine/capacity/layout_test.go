package capacity_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// describe is a GPU layout in a line: "0:on 1g.10gb@0 ...", "1:off",
// "2:?" (unknown), with "solved" when placed by the solver.
func describe(ls []capacity.GPULayout) string {
	var out []string
	for _, l := range ls {
		s := string(rune('0' + l.Index))
		switch {
		case l.Unknown:
			s += ":?"
		case !l.MIG:
			s += ":off"
		default:
			s += ":on"
			for _, in := range l.Instances {
				s += " " + in.Profile + "@" + string(rune('0'+in.Placement.Start))
			}
		}
		if l.Solved {
			s += " solved"
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

// What a plan draws of a re-partition: the GPUs now (from GPU Feature
// Discovery's counts, placed by the solver) and after the pool's layout,
// device groups applied as mig-parted applies them (a GPU no group names
// keeps what it has).
func TestRepartitions(t *testing.T) {
	for _, tt := range []struct {
		name, layout string
		counts       map[string]any
		gpus         int
		before       string
		after        string
	}{
		{
			name:   "every GPU",
			layout: `slices = { "3g.40gb" = 1, "1g.10gb" = 2 }`,
			counts: map[string]any{"nvidia.com/mig-3g.40gb.count": "4"}, gpus: 2,
			before: "0:on 3g.40gb@0 3g.40gb@4 solved | 1:on 3g.40gb@0 3g.40gb@4 solved",
			after:  "0:on 3g.40gb@0 1g.10gb@4 1g.10gb@5 solved | 1:on 3g.40gb@0 1g.10gb@4 1g.10gb@5 solved",
		},
		{
			name:   "device groups",
			layout: "device {\n    indexes = [0]\n    slices = { \"7g.80gb\" = 1 }\n  }\n  device {\n    indexes = [1]\n    enabled = false\n  }",
			counts: map[string]any{}, gpus: 3,
			before: "0:off | 1:off | 2:off",
			after:  "0:on 7g.80gb@0 solved | 1:off solved | 2:off",
		},
		{
			name:   "counts that do not divide evenly",
			layout: `slices = { "7g.80gb" = 1 }`,
			counts: map[string]any{"nvidia.com/mig-1g.10gb.count": "3"}, gpus: 2,
			before: "0:? | 1:?",
			after:  "0:on 7g.80gb@0 solved | 1:on 7g.80gb@0 solved",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := enginetest.LoadSource(t, "gpuform {\n  stack = \"s\"\n}\nmig_layout \"l\" {\n  gpu = \"A100-80GB\"\n  "+tt.layout+"\n}\npool \"a100\" {\n  gpu = \"A100-80GB\"\n  mig_layout = mig_layout.l\n}\n")
			n := enginetest.GPUNode("n0", "a100", "NVIDIA-A100-SXM4-80GB", tt.gpus, "")
			labels := n.Object["metadata"].(map[string]any)["labels"].(map[string]any)
			for k, v := range tt.counts {
				labels[k] = v
			}
			other := enginetest.GPUNode("n1", "a100", "NVIDIA-A100-SXM4-80GB", 1, "")
			reps := capacity.Repartitions(cfg, []*unstructured.Unstructured{other, n}, capacity.DRAInventory{}, []string{"n0", "gone"}, mig.Default())
			if len(reps) != 1 || reps[0].Node != "n0" || reps[0].Pool != "a100" || reps[0].Model != "A100-80GB" {
				t.Fatalf("repartitions = %+v, want node n0 of pool a100", reps)
			}
			if got := describe(reps[0].Before); got != tt.before {
				t.Errorf("before = %s, want %s", got, tt.before)
			}
			if got := describe(reps[0].After); got != tt.after {
				t.Errorf("after = %s, want %s", got, tt.after)
			}
		})
	}
}

// A DRA pool's node is drawn from its devices: GPUs by the index in their
// names, MIG devices at the placements the driver's names give, solved
// from counts otherwise (unknown when they do not fit one GPU), and a GPU
// whose devices are only the dynamic-MIG partitions the driver could make
// unknown; never from the node's labels.
func TestRepartitionsOfADRANode(t *testing.T) {
	cfg := enginetest.LoadSource(t, "gpuform {\n  stack = \"s\"\n}\nmig_layout \"l\" {\n  gpu = \"A100-80GB\"\n  slices = { \"7g.80gb\" = 1 }\n}\npool \"a100\" {\n  gpu = \"A100-80GB\"\n  mode = \"dra\"\n  mig_layout = mig_layout.l\n}\n")
	const product = "NVIDIA A100-SXM4-80GB"
	dev := func(gpu, name, profile string, partition bool) capacity.DRADevice {
		typ := capacity.DRATypeMIG
		if profile == "" {
			typ = capacity.DRATypeGPU
		}
		return capacity.DRADevice{Node: "n0", Name: name, Type: typ, Profile: profile, Product: product, GPU: gpu, Partition: partition}
	}
	for _, tt := range []struct {
		name   string
		devs   []capacity.DRADevice
		before string
	}{
		{"driver's names, out of index order", []capacity.DRADevice{
			dev("b", "gpu-1", "", false),
			dev("a", "gpu-0-mig-9-4-4", "3g.40gb", false), dev("a", "gpu-0-mig-19-0-1", "1g.10gb", false),
		}, "0:on 1g.10gb@0 3g.40gb@4 | 1:off"},
		{"other names: solved from counts", []capacity.DRADevice{
			dev("a", "gpu-0-mig-3g40gb-0", "3g.40gb", false), dev("a", "gpu-0-mig-3g40gb-1", "3g.40gb", false),
		}, "0:on 3g.40gb@0 3g.40gb@4 solved"},
		{"more than one GPU holds", []capacity.DRADevice{
			dev("a", "x", "7g.80gb", false), dev("a", "y", "7g.80gb", false),
		}, "0:? solved"},
		{"dynamic MIG partitions only", []capacity.DRADevice{
			dev("a", "gpu-0-mig-19-0-1", "1g.10gb", true), dev("a", "gpu-0-mig-9-0-4", "3g.40gb", true),
		}, "0:?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dra := capacity.DRAInventory{Served: true, Nodes: map[string][]capacity.DRADevice{"n0": tt.devs}}
			n := enginetest.GPUNode("n0", "a100", "NVIDIA-A100-SXM4-80GB", 8, "")
			reps := capacity.Repartitions(cfg, []*unstructured.Unstructured{n}, dra, []string{"n0"}, mig.Default())
			if len(reps) != 1 || !reps[0].DRA {
				t.Fatalf("repartitions = %+v, want node n0 drawn from its DRA devices", reps)
			}
			if got := describe(reps[0].Before); got != tt.before {
				t.Errorf("before = %s, want %s", got, tt.before)
			}
		})
	}
}
