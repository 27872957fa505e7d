package sim

import (
	"fmt"
	"strings"
)

// parseTaint reads a taint written as kubectl taint writes it,
// key[=value]:Effect, into a Node's spec.taints entry.
func parseTaint(s string) (map[string]any, error) {
	kv, effect, ok := strings.Cut(s, ":")
	switch {
	case !ok:
		return nil, fmt.Errorf("taint %q: write key=value:Effect", s)
	case effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute":
		return nil, fmt.Errorf("taint %q: the effect is NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	key, value, _ := strings.Cut(kv, "=")
	if key == "" {
		return nil, fmt.Errorf("taint %q has no key", s)
	}
	t := map[string]any{"key": key, "effect": effect}
	if value != "" {
		t["value"] = value
	}
	return t, nil
}

// nodeTaints is the spec.taints of a node declared with taints (checked
// when the cluster was opened), or nil.
func nodeTaints(taints []string) []any {
	var out []any
	for _, s := range taints {
		if t, err := parseTaint(s); err == nil {
			out = append(out, t)
		}
	}
	return out
}
