package capacity

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
)

// ModeSwitch is a pool whose GPUs move between the device plugin and DRA:
// a migration, planned as such. Until it is done the GPUs can be handed
// out twice (the device plugin's pods keep theirs while NVIDIA's DRA
// driver offers the same GPUs to claims, or the other way round), so the
// pods using them are the plan's disruption.
type ModeSwitch struct {
	Pool *config.Pool
	// ToDRA is a move from the device plugin to DRA; else back.
	ToDRA bool
	// Nodes are the nodes the pool selects.
	Nodes []string
}

// ModeSwitches are the pools of cfg that change how their GPUs are
// offered: a DRA pool none of whose DeviceClasses are applied yet, on
// nodes where the device plugin still advertises nvidia.com resources;
// and a device-plugin pool whose DeviceClasses are applied (appliedDRA:
// the addresses of the pools whose DeviceClasses the stack holds).
func ModeSwitches(cfg *config.Config, nodes []*unstructured.Unstructured, appliedDRA map[string]bool) []ModeSwitch {
	var out []ModeSwitch
	for _, p := range cfg.Pools {
		var members []string
		plugin := false
		for _, n := range nodes {
			if SelectsNode(p.NodeSelector, n) {
				members = append(members, n.GetName())
				plugin = plugin || advertisesNVIDIA(n)
			}
		}
		switch {
		case p.DRA() && !appliedDRA[p.Address] && plugin:
			out = append(out, ModeSwitch{Pool: p, ToDRA: true, Nodes: members})
		case !p.DRA() && appliedDRA[p.Address]:
			out = append(out, ModeSwitch{Pool: p, Nodes: members})
		}
	}
	return out
}
