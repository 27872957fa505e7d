package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/config"
)

// What compile writes and capacity and drift read back: the resources a
// quota asks for, and the two encodings of a MIG layout on a node (written
// by the MIG backends of package engine/compile, read by drift to tell
// whether a node already carries its pool's layout).

// QuotaResources is the extended resources (and counts) one quota block
// asks for: MIG slices by their resource name, whole GPUs as nvidia.com/gpu.
func QuotaResources(q *config.Quota) map[string]int64 {
	res := map[string]int64{}
	for prof, n := range q.Slices {
		if n > 0 {
			res[MIGResource(prof)] += int64(n)
		}
	}
	if q.GPUs > 0 {
		res[ResourceGPU] += int64(q.GPUs)
	}
	return res
}

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
// agent reads: the same mig-parted shape for the one layout, as compact JSON.
func AgentLayout(l *config.MIGLayout) (string, error) {
	b, err := yaml.Marshal(map[string]any{"name": l.Name, "gpu": l.GPU, "config": migPartedConfig(l)})
	if err != nil {
		return "", err
	}
	j, err := yaml.YAMLToJSON(b)
	return string(j), err
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

// sortedStrings returns the keys of m in order.
func sortedStrings(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
