package capacity

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/mig"
)

// Where a NodeInventory comes from.
const (
	// SourceAgent: the gpuform agent's annotation agentv1.AnnotInventory.
	SourceAgent = "agent"
	// SourceGFD: GPU Feature Discovery's nvidia.com/gpu.* labels.
	SourceGFD = "gfd"
	// SourceCapacity: the node's nvidia.com/gpu capacity (a count only).
	SourceCapacity = "capacity"
	// SourceNone: the node reports no GPUs.
	SourceNone = "none"
)

// NodeInventory is what gpuform knows of one node's GPUs.
type NodeInventory struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Source is where it came from: SourceAgent, SourceGFD, SourceCapacity
	// or SourceNone.
	Source string `json:"source"`
	// Model is the catalog key when known, else the product name reported.
	Model string `json:"model"`
	// GPUs is the number of GPUs.
	GPUs int `json:"gpus"`
	// MemoryMiB is the memory of one GPU, when reported.
	MemoryMiB int `json:"memory_mib,omitempty"`
	// Driver is the NVIDIA driver version, when reported.
	Driver string `json:"driver,omitempty"`
	// MIG counts the MIG instances present, by profile.
	MIG map[string]int `json:"mig,omitempty"`
	// Busy counts the GPUs with running processes (agent only).
	Busy int `json:"busy,omitempty"`
	// Warning says why a published inventory was not trusted.
	Warning string `json:"warning,omitempty"`
	// Layouts are the GPUs' MIG instances in their placements: read from
	// the agent's inventory, or placed by the solver from GPU Feature
	// Discovery's counts (Solved); none from the capacity alone.
	Layouts []GPULayout `json:"layouts,omitempty"`
}

// InventoryOf reads what a Node says of its GPUs: the agent's annotation
// when present and sound, else GPU Feature Discovery labels, else the
// nvidia.com/gpu capacity.
func InventoryOf(n *unstructured.Unstructured, cat *mig.Catalog) NodeInventory {
	out := NodeInventory{Node: n.GetName(), Source: SourceNone}
	labels := n.GetLabels()
	if a := n.GetAnnotations()[agentv1.AnnotInventory]; a != "" {
		inv, err := agentv1.ParseInventory(a)
		if err == nil {
			err = checkAgainstNode(inv, n, cat)
		}
		if err == nil {
			out.Source, out.Driver, out.GPUs = SourceAgent, inv.DriverVersion, len(inv.GPUs)
			for _, g := range inv.GPUs {
				out.Model = cat.Key(g.ModelOrName())
				out.MemoryMiB = g.MemoryMiB
				for _, in := range g.Instances {
					if out.MIG == nil {
						out.MIG = map[string]int{}
					}
					out.MIG[in.Profile]++
				}
				if len(g.Processes) > 0 {
					out.Busy++
				}
			}
			if gfd := labels["nvidia.com/gpu.product"]; gfd != "" && out.Model != "" && labelModel(labels, cat) != out.Model {
				out.Warning = fmt.Sprintf("the inventory annotation says %s but GPU Feature Discovery says %s; trusting GPU Feature Discovery", out.Model, gfd)
			} else {
				out.Layouts = agentLayouts(inv, cat)
				return out
			}
		} else {
			out.Warning = "ignored the gpuform.dev/inventory annotation: " + err.Error() + "; trusting " + fallbackSource(n)
		}
	}
	if p := labels["nvidia.com/gpu.product"]; p != "" {
		out.Source = SourceGFD
		out.Model = labelModel(labels, cat)
		out.GPUs, _ = strconv.Atoi(labels["nvidia.com/gpu.count"])
		out.MemoryMiB, _ = strconv.Atoi(labels["nvidia.com/gpu.memory"])
		if maj := labels["nvidia.com/cuda.driver.major"]; maj != "" {
			out.Driver = strings.Trim(maj+"."+labels["nvidia.com/cuda.driver.minor"]+"."+labels["nvidia.com/cuda.driver.rev"], ".")
		}
		for k, v := range labels {
			if prof, ok := strings.CutPrefix(k, "nvidia.com/mig-"); ok && strings.HasSuffix(prof, ".count") {
				if c, err := strconv.Atoi(v); err == nil && c > 0 {
					if out.MIG == nil {
						out.MIG = map[string]int{}
					}
					out.MIG[strings.TrimSuffix(prof, ".count")] = c
				}
			}
		}
		if out.GPUs > 0 && out.GPUs <= agentv1.MaxGPUs {
			model, _ := cat.Lookup(p)
			out.Layouts = countLayouts(model, out.GPUs, out.MIG)
		}
		return out
	}
	if c, ok, _ := unstructured.NestedString(n.Object, "status", "capacity", mig.ResourceGPU); ok {
		out.Source = SourceCapacity
		out.GPUs, _ = strconv.Atoi(c)
	}
	return out
}

// checkAgainstNode refuses an inventory annotation that contradicts the
// rest of the Node or the catalog, as one written by something other than
// the agent may: a GPU count other than GPU Feature Discovery's
// nvidia.com/gpu.count label (or, without MIG, the node's nvidia.com/gpu
// capacity), MIG instances on a GPU whose MIG is off or whose model has no
// MIG, and instances of a profile or at a placement the model does not have,
// or overlapping each other.
func checkAgainstNode(inv *agentv1.Inventory, n *unstructured.Unstructured, cat *mig.Catalog) error {
	labels := n.GetLabels()
	if c := labels["nvidia.com/gpu.count"]; c != "" {
		if want, err := strconv.Atoi(c); err == nil && want != len(inv.GPUs) {
			return fmt.Errorf("it lists %d GPUs but GPU Feature Discovery counts %d (label nvidia.com/gpu.count)", len(inv.GPUs), want)
		}
	}
	anyMIG := false
	for _, g := range inv.GPUs {
		anyMIG = anyMIG || g.MIGEnabled || len(g.Instances) > 0
	}
	if c, ok, _ := unstructured.NestedString(n.Object, "status", "capacity", mig.ResourceGPU); ok && !anyMIG {
		if want, err := strconv.Atoi(c); err == nil && want != len(inv.GPUs) {
			return fmt.Errorf("it lists %d GPUs but the node's capacity is %d %s", len(inv.GPUs), want, mig.ResourceGPU)
		}
	}
	for _, g := range inv.GPUs {
		if len(g.Instances) == 0 {
			continue
		}
		if !g.MIGEnabled {
			return fmt.Errorf("GPU %d has MIG instances but MIG is off", g.Index)
		}
		model, known := cat.Lookup(g.ModelOrName())
		if !known {
			continue
		}
		if !model.MIG {
			return fmt.Errorf("GPU %d is a %s, which has no MIG, but it lists MIG instances", g.Index, model.Key)
		}
		used := make([]bool, model.MemorySlots)
		for _, in := range g.Instances {
			prof, ok := model.Profile(in.Profile)
			if !ok {
				return fmt.Errorf("GPU %d lists MIG profile %q, which a %s does not have", g.Index, in.Profile, model.Key)
			}
			placed := false
			for _, pl := range prof.Placements {
				placed = placed || pl.Start == in.Start && pl.Size == in.Size
			}
			if !placed {
				return fmt.Errorf("GPU %d lists a %s instance at %d:%d, not a placement a %s has", g.Index, prof.Name, in.Start, in.Size, model.Key)
			}
			for s := in.Start; s < in.Start+in.Size; s++ {
				if used[s] {
					return fmt.Errorf("GPU %d lists MIG instances that overlap at memory slot %d", g.Index, s)
				}
				used[s] = true
			}
		}
	}
	return nil
}

// nfdPCIPrefix starts Node Feature Discovery's PCI labels,
// feature.node.kubernetes.io/pci-<fields>.present, whose fields are those
// of its deviceLabelFields joined by "_" ("0302_10de" by default,
// "0302_10de_2330" with the device field).
const nfdPCIPrefix = "feature.node.kubernetes.io/pci-"

// labelModel is the catalog key of the GPU a node's labels name: GPU
// Feature Discovery's nvidia.com/gpu.product when the catalog knows it,
// else the one catalog GPU whose PCI device ID Node Feature Discovery's
// PCI labels carry (an H800 or a board no alias spells), else the product
// label as it is.
func labelModel(labels map[string]string, cat *mig.Catalog) string {
	product := labels["nvidia.com/gpu.product"]
	if g, ok := cat.Lookup(product); ok {
		return g.Key
	}
	var found *mig.GPU
	for k, v := range labels {
		fields, ok := strings.CutPrefix(k, nfdPCIPrefix)
		if !ok || v != "true" {
			continue
		}
		fields, ok = strings.CutSuffix(fields, ".present")
		if !ok {
			continue
		}
		parts := strings.Split(fields, "_")
		for i := 0; i+1 < len(parts); i++ {
			if !strings.EqualFold(parts[i], "10de") {
				continue
			}
			if id, ok := mig.ParsePCIDeviceID("10de:" + parts[i+1]); ok {
				if g, ok := cat.LookupPCI(id); ok {
					if found != nil && found != g {
						return product // two models: say what GFD says
					}
					found = g
				}
			}
		}
	}
	if found != nil {
		return found.Key
	}
	return product
}

// fallbackSource names what InventoryOf reads of n without its annotation.
func fallbackSource(n *unstructured.Unstructured) string {
	if n.GetLabels()["nvidia.com/gpu.product"] != "" {
		return "GPU Feature Discovery"
	}
	if _, ok, _ := unstructured.NestedString(n.Object, "status", "capacity", mig.ResourceGPU); ok {
		return "the node's capacity"
	}
	return "nothing: the node reports no GPUs"
}

// InventoryWarnings returns a warning for each node whose inventory
// annotation was not trusted (malformed, or contradicting the node's labels,
// capacity or the catalog), by node name, for the plan to show: a warning
// diagnostic whose Summary is "Node <name>: <why>", with the range of the
// block of the first pool of cfg that selects the node (none when no pool
// does, or cfg is nil).
func InventoryWarnings(cfg *config.Config, nodes []*unstructured.Unstructured, cat *mig.Catalog) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, n := range nodes {
		inv := InventoryOf(n, cat)
		if inv.Warning == "" {
			continue
		}
		d := &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: fmt.Sprintf("Node %s: %s", inv.Node, inv.Warning)}
		if p := poolOf(cfg, n); p != nil {
			d.Subject = p.DeclRange.Ptr()
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Summary < out[j].Summary })
	return out
}

// poolOf is the first pool of cfg that selects node n, or nil.
func poolOf(cfg *config.Config, n *unstructured.Unstructured) *config.Pool {
	if cfg == nil {
		return nil
	}
	for _, p := range cfg.Pools {
		if SelectsNode(p.NodeSelector, n) {
			return p
		}
	}
	return nil
}

// SelectsNode reports whether node n is selected by sel: every selector
// label matches one of n's, and an empty selector selects no node. The
// labels are read where they are: every pool's selector is matched against
// every Node, and n.GetLabels() would copy them each time.
func SelectsNode(sel map[string]string, n *unstructured.Unstructured) bool {
	if len(sel) == 0 {
		return false
	}
	md, _ := n.Object["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	for k, v := range sel {
		if s, _ := labels[k].(string); s != v {
			return false
		}
	}
	return true
}
