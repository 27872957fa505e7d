package mig

import "strings"

// operatorBalanced returns the "all-balanced" layout of the GPU Operator's
// default mig-parted configuration (ConfigMap default-mig-parted-config,
// NVIDIA/gpu-operator assets/state-mig-manager/0400_configmap.yaml) for the
// GPU model with catalog key key, or nil where the operator defines none.
// TestNVIDIADefaultConfig checks every one against that file.
// That file also names one config per profile, "all-<profile>" with "+"
// written as "." ("all-1g.10gb", "all-1g.10gb.me"), each asking for the
// profile's maximum count, plus "all-disabled" and "all-enabled".
func operatorBalanced(key string) map[string]int {
	switch key {
	case "A30-24GB":
		return map[string]int{"1g.6gb": 2, "2g.12gb": 1}
	case "A100-40GB":
		return map[string]int{"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
	case "A100-80GB", "H100-80GB":
		return map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
	case "H100-94GB":
		return map[string]int{"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}
	case "H100-96GB", "PG506-96GB":
		return map[string]int{"1g.12gb": 2, "2g.24gb": 1, "3g.48gb": 1}
	case "GH200-144GB":
		return map[string]int{"1g.18gb": 2, "2g.36gb": 1, "3g.72gb": 1}
	case "GB200-186GB":
		return map[string]int{"1g.23gb": 2, "2g.47gb": 1, "3g.93gb": 1}
	case "RTX-PRO-6000-96GB":
		return map[string]int{"1g.24gb": 2, "2g.48gb": 1}
	case "H200-141GB":
		return map[string]int{"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}
	case "B200-180GB":
		return map[string]int{"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}
	}
	return nil
}

// Names of the GPU Operator's default configs that do not depend on a profile.
const (
	// OperatorAllDisabled turns MIG off.
	OperatorAllDisabled = "all-disabled"
	// OperatorAllEnabled turns MIG on with no instances.
	OperatorAllEnabled = "all-enabled"
	// OperatorAllBalanced is a mix of small, medium and large instances.
	OperatorAllBalanced = "all-balanced"
)

// OperatorConfigName is the name the GPU Operator's default mig-parted
// config gives the layout of profile on every GPU: "all-1g.10gb",
// "all-1g.10gb.me".
func OperatorConfigName(profile string) string {
	return "all-" + strings.ReplaceAll(profile, "+", ".")
}

// OperatorConfigs returns the GPU Operator's default mig-parted named configs
// that apply to g, as config name -> slices per GPU (profile -> count):
// "all-disabled" (nil: MIG off), "all-enabled" (empty: MIG on, no
// instances), "all-<profile>" for every profile of g at its maximum count,
// and "all-balanced" where the operator defines it for g. It returns nil
// when g has no MIG. The result is a new map on each call.
func OperatorConfigs(g *GPU) map[string]map[string]int {
	if g == nil || !g.MIG || len(g.Profiles) == 0 {
		return nil
	}
	out := map[string]map[string]int{
		OperatorAllDisabled: nil,
		OperatorAllEnabled:  {},
	}
	for _, p := range g.Profiles {
		out[OperatorConfigName(p.Name)] = map[string]int{p.Name: p.MaxInstances}
	}
	if b := operatorBalanced(g.Key); b != nil {
		out[OperatorAllBalanced] = b
	}
	return out
}
