package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
)

// What compile writes and drift reads back: the two encodings of a MIG
// layout on a node (written by the MIG backends of package engine/compile,
// read by drift to tell whether a node already carries its pool's layout).
// The resources a quota asks for are capacity.QuotasOf's (one value per tenant).

// MIGPartedName names a layout's mig-parted config <layout>-<hash of its
// content>, the value of label nvidia.com/mig.config on the pool's nodes, so
// that editing a layout changes the label, which is what makes mig-manager
// re-partition them. It also returns the config itself (a list of device
// filters), as it goes into the mig-parted ConfigMap.
func MIGPartedName(l *config.MIGLayout) (string, []any) {
	conf := migPartedConfig(l)
	b, _ := json.Marshal(conf)
	h := sha256.Sum256(b)
	return l.Name + "-" + hex.EncodeToString(h[:4]), conf
}

// migPartedConfig is one named mig-parted config (a list of device filters).
func migPartedConfig(l *config.MIGLayout) []any {
	if len(l.Devices) == 0 {
		return []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": intMapAny(l.Slices)}}
	}
	var out []any
	for _, g := range l.Devices {
		idx := make([]any, len(g.Indexes))
		for i, v := range g.Indexes {
			idx[i] = int64(v)
		}
		entry := map[string]any{"devices": idx, "mig-enabled": g.Enabled}
		if g.Enabled {
			entry["mig-devices"] = intMapAny(g.Slices)
		}
		out = append(out, entry)
	}
	return out
}

// AgentLayout is the node annotation gpuform.dev/mig-layout the gpuform
// agent reads: the same mig-parted shape for the one layout, as compact JSON
// in the wire type of api/agent/v1.
func AgentLayout(l *config.MIGLayout) (string, error) {
	return agentv1.MIGLayout{Name: l.Name, GPU: l.GPU, Config: agentConfig(l)}.Annotation()
}

// agentConfig is migPartedConfig in the agent's types.
func agentConfig(l *config.MIGLayout) agentv1.Layout {
	if len(l.Devices) == 0 {
		return agentv1.Layout{{All: true, Enabled: true, Slices: l.Slices}}
	}
	var out agentv1.Layout
	for _, g := range l.Devices {
		e := agentv1.LayoutEntry{Indexes: g.Indexes, Enabled: g.Enabled}
		if g.Enabled {
			e.Slices = g.Slices
		}
		out = append(out, e)
	}
	return out
}

// intMapAny keeps the positive counts of m, as int64 for YAML and JSON.
func intMapAny(m map[string]int) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if v > 0 {
			out[k] = int64(v)
		}
	}
	return out
}
