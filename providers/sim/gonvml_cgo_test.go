//go:build linux && cgo

package sim_test

import (
	"encoding/json"
	"fmt"
	"testing"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
	"github.com/gpuform/gpuform/providers/nvml"
	"github.com/gpuform/gpuform/providers/sim"
)

// TestCatalogGPUsMatchGoNVML holds the simulated cluster's cgo-free GPUs
// (sim.CatalogGPUs) to the agent's MIG logic over go-nvml's simulated
// servers (nvml.SimulatedGPUs): for every model go-nvml simulates, the
// same sequence of layouts (each profile alone, each at its most, the
// GPUs laid out differently, MIG off, layouts that cannot place) gives
// the same errors, the same reboot answer and the same inventory, byte
// for byte, after every step, in one order and in the reverse one.
func TestCatalogGPUsMatchGoNVML(t *testing.T) {
	cat := mig.Default()
	models := 0
	for _, g := range cat.GPUs() {
		if !sim.CanSimulate(cat, g.Key) {
			if nvml.CanSimulate(cat, g.Key) {
				t.Errorf("%s: go-nvml simulates it, CatalogGPUs does not", g.Key)
			}
			continue
		}
		models++
		t.Run(g.Key, func(t *testing.T) {
			seq := layoutsFor(t, g)
			rev := make([]agentv1.Layout, len(seq))
			for i, l := range seq {
				rev[len(seq)-1-i] = l
			}
			for _, order := range [][]agentv1.Layout{seq, rev} {
				compareSequence(t, cat, g.Key, order)
			}
		})
	}
	if models != 6 {
		t.Errorf("%d models simulated, want 6", models)
	}
}

func compareSequence(t *testing.T, cat *mig.Catalog, model string, seq []agentv1.Layout) {
	t.Helper()
	want, err := nvml.SimulatedGPUs{}.Simulate(cat, model, 2, "", "node-a")
	if err != nil || want == nil {
		t.Fatalf("go-nvml: %v, %v", want, err)
	}
	got, err := sim.CatalogGPUs{}.Simulate(cat, model, 2, "", "node-a")
	if err != nil || got == nil {
		t.Fatalf("catalog: %v, %v", got, err)
	}
	sameInventory(t, "start", want, got)
	for i, l := range seq {
		step := fmt.Sprintf("step %d (%s)", i, layoutString(l))
		wr, werr := want.Apply(l)
		gr, gerr := got.Apply(l)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || wr != gr {
			t.Errorf("%s: go-nvml gives %v, %v; catalog gives %v, %v", step, wr, werr, gr, gerr)
		}
		sameInventory(t, step, want, got)
	}
}

func sameInventory(t *testing.T, step string, want, got agentv1.NodeGPUs) {
	t.Helper()
	wi, werr := want.Read()
	gi, gerr := got.Read()
	if werr != nil || gerr != nil {
		t.Fatalf("%s: read: %v, %v", step, werr, gerr)
	}
	wb, _ := json.Marshal(wi)
	gb, _ := json.Marshal(gi)
	if string(wb) != string(gb) {
		t.Errorf("%s: inventories differ\ngo-nvml: %s\ncatalog: %s", step, wb, gb)
	}
}

// layoutsFor is a sequence of layouts for a GPU model: per profile one
// instance and as many as fit, on both GPUs; both GPUs laid out
// differently; MIG off; a profile the model lacks; more than fit.
func layoutsFor(t *testing.T, g *mig.GPU) []agentv1.Layout {
	t.Helper()
	all := func(s map[string]int) agentv1.Layout {
		return agentv1.Layout{{All: true, Enabled: true, Slices: s}}
	}
	var seq []agentv1.Layout
	var most []map[string]int
	for _, p := range g.Profiles {
		n := 1
		for {
			if _, err := mig.Solve(g, map[string]int{p.Name: n + 1}); err != nil {
				break
			}
			n++
		}
		seq = append(seq, all(map[string]int{p.Name: 1}), all(map[string]int{p.Name: n}))
		most = append(most, map[string]int{p.Name: n})
		seq = append(seq, all(map[string]int{p.Name: n + 1}))
	}
	if len(most) < 2 {
		t.Fatalf("%s has %d profiles", g.Key, len(most))
	}
	seq = append(seq,
		agentv1.Layout{{Indexes: []int{0}, Enabled: true, Slices: most[0]}, {Indexes: []int{1}, Enabled: true, Slices: most[len(most)-1]}},
		agentv1.Layout{{Indexes: []int{1}, Enabled: false}},
		agentv1.Layout{{Indexes: []int{1}, Enabled: true, Slices: most[1]}},
		agentv1.Layout{{All: true, Enabled: false}},
		all(map[string]int{"9g.999gb": 1}),
		agentv1.Layout{{Indexes: []int{2}, Enabled: true, Slices: most[0]}},
	)
	return seq
}

func layoutString(l agentv1.Layout) string {
	b, _ := json.Marshal(l)
	return string(b)
}
