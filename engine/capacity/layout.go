package capacity

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// GPULayout is one GPU's MIG instances in their memory-slot placements,
// what the drawings of plan, inventory and the PR preview show.
type GPULayout struct {
	// Index is the GPU's NVML index.
	Index int `json:"index"`
	// Slots is the number of memory slots of its model (0 when the catalog
	// does not know the model: nothing to draw).
	Slots int `json:"memory_slots"`
	// MIG is whether MIG is on.
	MIG bool `json:"mig"`
	// Instances are the MIG instances, sorted by placement start.
	Instances []mig.Instance `json:"instances,omitempty"`
	// Solved is true when the placements are the solver's rather than read
	// from the GPU: GPU Feature Discovery reports counts only, and a layout
	// to apply is placed the way the agent places it.
	Solved bool `json:"solved,omitempty"`
	// Unknown is true when nothing says what the GPU holds.
	Unknown bool `json:"unknown,omitempty"`
}

// Repartition is one node's GPUs before and after a plan re-partitions it.
type Repartition struct {
	// Node is the node's name; Pool the pool that selects it; Model the
	// catalog key of its GPUs.
	Node  string `json:"node"`
	Pool  string `json:"pool"`
	Model string `json:"model"`
	// Before is what the node reports now; After what the pool's layout
	// makes of it.
	Before []GPULayout `json:"before"`
	After  []GPULayout `json:"after"`
	// DRA says Before is what NVIDIA's DRA driver publishes (a DRA pool).
	DRA bool `json:"dra,omitempty"`
}

// agentLayouts is the layout of each GPU of a trusted agent inventory.
func agentLayouts(inv *agentv1.Inventory, cat *mig.Catalog) []GPULayout {
	out := make([]GPULayout, 0, len(inv.GPUs))
	for _, g := range inv.GPUs {
		l := GPULayout{Index: g.Index, MIG: g.MIGEnabled}
		if model, ok := cat.Lookup(g.ModelOrName()); ok && model.MIG {
			l.Slots = model.MemorySlots
		}
		for _, in := range g.Instances {
			l.Instances = append(l.Instances, mig.Instance{Profile: in.Profile, Placement: mig.Placement{Start: in.Start, Size: in.Size}})
		}
		out = append(out, l)
	}
	return out
}

// countLayouts is the layout of gpus GPUs of model g from GPU Feature
// Discovery's counts per profile (over the whole node): each GPU gets an
// equal share placed by the solver; GPUs are Unknown when the counts do
// not divide evenly or do not fit.
func countLayouts(g *mig.GPU, gpus int, counts map[string]int) []GPULayout {
	per := map[string]int{}
	even := true
	for prof, n := range counts {
		even = even && n%gpus == 0
		per[prof] = n / gpus
	}
	var inst []mig.Instance
	var err error
	if g != nil && g.MIG && len(counts) > 0 {
		inst, err = mig.Solve(g, per)
	}
	out := make([]GPULayout, gpus)
	for i := range out {
		out[i].Index = i
		switch {
		case g == nil || !g.MIG:
			out[i].Unknown = len(counts) > 0
		case len(counts) == 0:
			out[i].Slots = g.MemorySlots
		case !even || err != nil:
			out[i].Slots, out[i].Unknown = g.MemorySlots, true
		default:
			out[i] = GPULayout{Index: i, Slots: g.MemorySlots, MIG: true, Instances: inst, Solved: true}
		}
	}
	return out
}

// afterLayout is what MIG layout l makes of GPUs now in before, on model
// g, the way mig-parted reads it: the slices on every GPU, or each device
// group on its indexes (a later group wins; a GPU no group names keeps what
// it has).
func afterLayout(l *config.MIGLayout, before []GPULayout, g *mig.GPU) []GPULayout {
	out := slices.Clone(before)
	set := func(i int, enabled bool, want map[string]int) {
		next := GPULayout{Index: out[i].Index, Slots: g.MemorySlots, MIG: enabled, Solved: true}
		if enabled {
			inst, err := mig.Solve(g, want)
			next.Instances, next.Unknown = inst, err != nil
		}
		out[i] = next
	}
	if len(l.Devices) == 0 {
		for i := range out {
			set(i, true, l.Slices)
		}
		return out
	}
	for _, d := range l.Devices {
		for i := range out {
			if slices.Contains(d.Indexes, out[i].Index) {
				set(i, d.Enabled, d.Slices)
			}
		}
	}
	return out
}

// Repartitions is, for each node of names (the nodes a plan re-partitions),
// its GPUs now and after the MIG layout of the pool of cfg that selects it,
// in the order of names. A DRA pool's node is what NVIDIA's DRA driver
// publishes of it in dra (draLayouts), a device-plugin pool's what its
// inventory reports. Nodes of no MIG pool, or whose GPUs the catalog does
// not know, are left out.
func Repartitions(cfg *config.Config, nodes []*unstructured.Unstructured, dra DRAInventory, names []string, cat *mig.Catalog) []Repartition {
	var out []Repartition
	for _, name := range names {
		i := slices.IndexFunc(nodes, func(n *unstructured.Unstructured) bool { return n.GetName() == name })
		if i < 0 {
			continue
		}
		p := poolOf(cfg, nodes[i])
		if p == nil || p.MIGLayout == nil {
			continue
		}
		g, ok := cat.Lookup(p.GPU)
		if !ok || !g.MIG {
			continue
		}
		inv := InventoryOf(nodes[i], cat)
		before := inv.Layouts
		if p.DRA() {
			before = draLayouts(dra.Nodes[name], g)
			inv.GPUs = GPUs(dra.Nodes[name])
		}
		if len(before) == 0 {
			if inv.GPUs > agentv1.MaxGPUs {
				continue
			}
			before = make([]GPULayout, inv.GPUs)
			for j := range before {
				before[j] = GPULayout{Index: j, Slots: g.MemorySlots, Unknown: true}
			}
		}
		out = append(out, Repartition{Node: name, Pool: p.Name, Model: g.Key, Before: before, After: afterLayout(p.MIGLayout, before, g), DRA: p.DRA()})
	}
	return out
}
