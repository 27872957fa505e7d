package drift

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// CheckHardware checks every pool's nodes against the pool: a node that
// reports no GPUs, GPUs of another model, another number of GPUs than most
// of the pool's nodes, a driver outside driver_version, an inventory the
// node's labels contradict, a failed MIG state, or (MIG state success and
// the layout in place) MIG instances other than the layout's. One item per
// node, Action empty: apply cannot fix hardware.
func CheckHardware(cfg *config.Config, live *engine.Live, cat *mig.Catalog) []Item {
	var out []Item
	for _, p := range cfg.Pools {
		var members []*unstructured.Unstructured
		for _, n := range live.Nodes {
			if capacity.SelectsNode(p.NodeSelector, n) {
				members = append(members, n)
			}
		}
		if p.DRA() {
			out = append(out, draHardware(cfg, p, members, live.DRA, cat)...)
			continue
		}
		invs := make([]capacity.NodeInventory, len(members))
		counts := map[int]int{}
		for i, n := range members {
			invs[i] = capacity.InventoryOf(n, cat)
			if invs[i].GPUs > 0 {
				counts[invs[i].GPUs]++
			}
		}
		usual := mostCommon(counts)
		want := cat.Key(p.GPU)
		for i, n := range members {
			inv := invs[i]
			var details []string
			switch {
			case inv.Source == capacity.SourceNone || inv.GPUs == 0:
				details = append(details, fmt.Sprintf("reports no GPUs; pool %s wants %s GPUs", p.Name, want))
			case inv.Source != capacity.SourceCapacity && inv.Model != want:
				details = append(details, fmt.Sprintf("has %s GPUs; pool %s wants %s", inv.Model, p.Name, want))
			}
			if inv.GPUs > 0 && usual > 0 && inv.GPUs != usual && counts[usual] > 1 {
				details = append(details, fmt.Sprintf("has %s where the pool's other nodes have %d: a GPU may have failed or fallen off the bus", capacity.Count(inv.GPUs, "GPU"), usual))
			}
			if inv.Warning != "" {
				details = append(details, inv.Warning)
			}
			details = append(details, driverDetail(p, inv.Driver)...)
			if p.MIGLayout != nil {
				details = append(details, migHardware(cfg, p, n, inv)...)
			}
			out = append(out, hardwareItem(p, n, details)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// migHardware checks a MIG pool's node: a failed state, and, when the
// state is success and the node carries the layout, the MIG instances.
func migHardware(cfg *config.Config, p *config.Pool, n *unstructured.Unstructured, inv capacity.NodeInventory) []string {
	if !layoutDone(cfg, p, n) || inv.GPUs == 0 || (inv.Source != capacity.SourceAgent && len(inv.MIG) == 0) {
		return nil // not done yet, not ours yet, or nothing reported to compare
	}
	want := layoutInstances(p.MIGLayout, inv.GPUs)
	if equalCounts(want, inv.MIG) {
		return nil
	}
	return []string{fmt.Sprintf("MIG state is success but the node has MIG instances %s where layout %s on %s asks for %s", countsString(inv.MIG), p.MIGLayout.Name, capacity.Count(inv.GPUs, "GPU"), countsString(want))}
}

// mostCommon is the most common GPU count of counts (nodes by their GPU
// count); ties go to the larger.
func mostCommon(counts map[int]int) int {
	usual := 0
	for gpus, n := range counts {
		if n > counts[usual] || (n == counts[usual] && gpus > usual) {
			usual = gpus
		}
	}
	return usual
}

// driverDetail says that a node's driver is outside pool p's
// driver_version; nil when it is inside, or either is unknown.
func driverDetail(p *config.Pool, driver string) []string {
	if p.DriverVersion == "" || driver == "" {
		return nil
	}
	if ok, err := config.SatisfiesVersion(p.DriverVersion, driver); err == nil && !ok {
		return []string{fmt.Sprintf("runs driver %s; pool %s needs %s", driver, p.Name, p.DriverVersion)}
	}
	return nil
}

// hardwareItem is the Hardware item of pool p's node n with details; none
// when there are none.
func hardwareItem(p *config.Pool, n *unstructured.Unstructured, details []string) []Item {
	if len(details) == 0 {
		return nil
	}
	return []Item{{Class: Hardware, Address: p.Address, APIVersion: "v1", Kind: "Node", Name: n.GetName(), Fields: []engine.FieldDiff{}, Details: details}}
}

// layoutDone reports whether node n carries MIG pool p's layout and its
// MIG state (the backend's label or annotation) is success.
func layoutDone(cfg *config.Config, p *config.Pool, n *unstructured.Unstructured) bool {
	if cfg.Settings.MIGBackend == config.BackendAgent {
		layout, err := engine.AgentLayout(p.MIGLayout)
		return n.GetAnnotations()[agentv1.AnnotMIGState] == "success" && err == nil && n.GetAnnotations()[agentv1.AnnotMIGLayout] == layout
	}
	name, _ := engine.MIGPartedName(p.MIGLayout)
	return n.GetLabels()[engine.LabelMIGState] == "success" && n.GetLabels()[engine.LabelMIGConfig] == name
}

// layoutInstances is how many instances of each profile a layout makes on
// a node of gpus GPUs.
func layoutInstances(l *config.MIGLayout, gpus int) map[string]int {
	out := map[string]int{}
	if len(l.Devices) == 0 {
		for prof, n := range l.Slices {
			if n > 0 {
				out[prof] += n * gpus
			}
		}
		return out
	}
	for _, g := range l.Devices {
		if !g.Enabled {
			continue
		}
		for _, i := range g.Indexes {
			if i >= gpus {
				continue
			}
			for prof, n := range g.Slices {
				if n > 0 {
					out[prof] += n
				}
			}
		}
	}
	return out
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// countsString renders profile counts as "1g.10gb x14, 3g.40gb x2" (or "none").
func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
