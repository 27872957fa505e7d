package sim

import (
	"fmt"
	"sort"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// catalogModels are the GPU models CatalogGPUs simulates, with the name
// NVML reports for each: those go-nvml's simulated servers cover
// (pkg/nvml/mock/gpus), named as they name them.
var catalogModels = map[string]string{
	"A100-40GB":  "Mock NVIDIA A100-SXM4-40GB",
	"A100-80GB":  "NVIDIA A100-SXM4-80GB",
	"A30-24GB":   "NVIDIA A30-PCIE-24GB",
	"H100-80GB":  "NVIDIA H100 80GB HBM3",
	"H200-141GB": "NVIDIA H200 141GB HBM3e",
	"B200-180GB": "NVIDIA B200 180GB HBM3e",
}

// simulatedDriver is the driver version of simulated GPUs whose node names
// none, and simulatedCUDA the CUDA driver version they report.
const (
	simulatedDriver = "550.54.15"
	simulatedCUDA   = "12.4"
)

// CatalogGPUs simulates nodes' GPUs from the GPU catalog, in plain Go: the
// simulated cluster's GPUs in every build, cgo or not, on every platform.
// It behaves as the gpuform agent's MIG logic (providers/nvml) over
// go-nvml's simulated servers does, which needs cgo: MIG mode changes at
// once (no reset), GPU instance IDs count up per GPU from 0 and are never
// reused, each GPU instance has one compute instance (ID 0) using all of its
// slices, and no process runs. The layout decision is the agent's own
// (mig.Solve, mig.Relayout). TestCatalogGPUsMatchGoNVML (cgo) holds the two
// to the same inventories and errors.
type CatalogGPUs struct{}

// Simulate returns a node's count GPUs of model, or nil when the model is
// not simulated (CanSimulate).
func (CatalogGPUs) Simulate(cat *mig.Catalog, model string, count int, driver, node string) (agentv1.NodeGPUs, error) {
	g, ok := cat.Lookup(model)
	if !ok || catalogModels[g.Key] == "" {
		return nil, nil
	}
	if count < 1 || count > 16 {
		return nil, fmt.Errorf("simulate %d GPUs: give 1 to 16", count)
	}
	if driver == "" {
		driver = simulatedDriver
	}
	n := &catalogNode{driver: driver}
	for i := 0; i < count; i++ {
		n.gpus = append(n.gpus, &catalogGPU{uuid: agentv1.SimulatedUUID(node, i), name: catalogModels[g.Key], g: g})
	}
	return n, nil
}

// catalogNode is one node's simulated GPUs.
type catalogNode struct {
	driver string
	gpus   []*catalogGPU
}

// catalogGPU is one simulated GPU: its MIG mode and GPU instances.
type catalogGPU struct {
	uuid, name string
	g          *mig.GPU
	migOn      bool
	nextID     int // the next GPU instance's ID
	gis        []catalogGI
}

// catalogGI is a GPU instance with its ID.
type catalogGI struct {
	id int
	in mig.Instance
}

// catalogPlan is what Apply does on one GPU.
type catalogPlan struct {
	gpu             *catalogGPU
	enable, disable bool
	keep            []int // indexes into gpu.gis
	create          []mig.Instance
}

// Apply applies layout as the agent does: every GPU's change is decided
// first, and nothing changes when one of them cannot take its entry.
func (n *catalogNode) Apply(layout agentv1.Layout) (bool, error) {
	plans, err := agentv1.PlanGPUs(layout, len(n.gpus), func(i int, e agentv1.LayoutEntry) (catalogPlan, error) {
		return n.gpus[i].plan(e)
	})
	if err != nil {
		return false, err
	}
	for _, p := range plans {
		p.execute()
	}
	return false, nil
}

// plan decides what to do on the GPU for entry e, as the agent's planGPU.
func (c *catalogGPU) plan(e agentv1.LayoutEntry) (catalogPlan, error) {
	p := catalogPlan{gpu: c}
	if !e.Enabled {
		p.disable = c.migOn
		return p, nil
	}
	if !c.g.MIG {
		return p, fmt.Errorf("%s (%s) does not support MIG", c.g.Key, c.name)
	}
	slices := c.g.Slices(e.Slices)
	sol, err := mig.Solve(c.g, slices)
	if err != nil {
		return p, err
	}
	if !c.migOn {
		p.enable, p.create = true, sol
		return p, nil
	}
	existing := make([]mig.Instance, len(c.gis))
	known := make([]bool, len(c.gis))
	for i, gi := range c.gis {
		existing[i], known[i] = gi.in, true
	}
	p.keep, _, p.create = mig.Relayout(c.g, slices, sol, existing, known)
	return p, nil
}

// execute carries the plan out.
func (p catalogPlan) execute() {
	c := p.gpu
	if p.enable {
		c.migOn = true
	}
	var gis []catalogGI
	for _, i := range p.keep {
		gis = append(gis, c.gis[i])
	}
	for _, in := range p.create {
		gis = append(gis, catalogGI{id: c.nextID, in: in})
		c.nextID++
	}
	if p.disable {
		c.migOn, gis = false, nil
	}
	c.gis = gis
}

// Read returns the GPUs' inventory as the agent publishes it.
func (n *catalogNode) Read() (*agentv1.Inventory, error) {
	inv := &agentv1.Inventory{Version: agentv1.InventoryVersion, DriverVersion: n.driver, CUDAVersion: simulatedCUDA, GPUs: []agentv1.GPU{}}
	for i, c := range n.gpus {
		gpu := agentv1.GPU{Index: i, UUID: c.uuid, Name: c.name, Model: c.g.Key, MemoryMiB: c.g.MemoryMiB, MIGCapable: true, MIGEnabled: c.migOn}
		gis := append([]catalogGI(nil), c.gis...)
		sort.SliceStable(gis, func(a, b int) bool {
			if gis[a].in.Placement.Start != gis[b].in.Placement.Start {
				return gis[a].in.Placement.Start < gis[b].in.Placement.Start
			}
			return gis[a].in.Placement.Size > gis[b].in.Placement.Size
		})
		for _, gi := range gis {
			gpu.Instances = append(gpu.Instances, agentv1.GPUInstance{
				ID:               gi.id,
				Instance:         agentv1.Instance{Profile: gi.in.Profile, Start: gi.in.Placement.Start, Size: gi.in.Placement.Size},
				ComputeInstances: []agentv1.ComputeInstance{{ID: 0, Profile: gi.in.Profile}},
			})
		}
		inv.GPUs = append(inv.GPUs, gpu)
	}
	return inv, nil
}
