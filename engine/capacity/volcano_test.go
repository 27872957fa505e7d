package capacity_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/mig"
)

// volcanoConfigMap is a ConfigMap named name in ns holding the Volcano
// scheduler's configuration doc, as Volcano's standard install writes it.
func volcanoConfigMap(ns, name, doc string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     map[string]any{capacity.VolcanoConfigKey: doc},
	}}
}

// volcanoConf is a Volcano scheduler configuration with the plugins of
// its second tier (YAML list items, indented for it).
func volcanoConf(plugins string) string {
	return "actions: \"enqueue, allocate, backfill, reclaim\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n" + plugins
}

const volcanoTreeSrc = `
gpuform {
  stack     = "org"
  scheduler = "SCHED"
}
pool "a100" {
  gpu = "A100-80GB"
}
department "ai" {
  quota "a100" {
    gpus = 2
  }
}
tenant "alpha" {
  department = department.ai
  quota "a100" {
    gpus = 1
  }
}
`

// TestVolcanoHierarchyIsOn: under scheduler = "volcano" with departments,
// plan reads the Volcano scheduler's configuration (ConfigMap
// volcano-scheduler-configmap): it refuses the departments when a readable
// configuration leaves the capacity plugin's hierarchy off (no capacity
// plugin, enableHierarchy false or not set) and warns when it cannot be
// read (absent, ambiguous, no key, unparsable); nothing without
// departments, under another scheduler, or when it was not looked for.
func TestVolcanoHierarchyIsOn(t *testing.T) {
	on := volcanoConf("  - name: capacity\n    enableHierarchy: true\n  - name: predicates\n")
	tree := strings.Replace(volcanoTreeSrc, "SCHED", "volcano", 1)
	cases := []struct {
		name, src string
		cms       []*unstructured.Unstructured
		unlisted  bool
		want      string // "": no diagnostic; else the summary of the one
	}{
		{name: "hierarchy on", cms: []*unstructured.Unstructured{volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, on)}},
		{name: "Helm release in another namespace", cms: []*unstructured.Unstructured{volcanoConfigMap("vc", capacity.VolcanoConfigMap, on)}},
		{name: "volcano-system's wins", cms: []*unstructured.Unstructured{
			volcanoConfigMap("elsewhere", capacity.VolcanoConfigMap, volcanoConf("  - name: proportion\n")),
			volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, on),
		}},
		{name: "proportion, no capacity plugin", want: "Volcano's hierarchy off",
			cms: []*unstructured.Unstructured{volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, volcanoConf("  - name: proportion\n"))}},
		{name: "capacity without enableHierarchy", want: "Volcano's hierarchy off",
			cms: []*unstructured.Unstructured{volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, volcanoConf("  - name: capacity\n"))}},
		{name: "enableHierarchy false", want: "Volcano's hierarchy off",
			cms: []*unstructured.Unstructured{volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, volcanoConf("  - name: capacity\n    enableHierarchy: false\n"))}},
		{name: "none", want: "Volcano's configuration not read"},
		{name: "two outside volcano-system", want: "Volcano's configuration not read", cms: []*unstructured.Unstructured{
			volcanoConfigMap("a", capacity.VolcanoConfigMap, on), volcanoConfigMap("b", capacity.VolcanoConfigMap, on)}},
		{name: "unparsable", want: "Volcano's configuration not read", cms: []*unstructured.Unstructured{volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, "tiers: [")}},
		{name: "another key", want: "Volcano's configuration not read", cms: []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": capacity.VolcanoConfigMap, "namespace": "volcano-system"}, "data": map[string]any{"scheduler.conf": on}}}}},
		{name: "no department", src: `
gpuform {
  stack     = "org"
  scheduler = "volcano"
}
pool "a100" {
  gpu = "A100-80GB"
}
`},
		{name: "scheduler kueue", src: strings.Replace(volcanoTreeSrc, "SCHED", "kueue", 1)},
		{name: "not looked for", unlisted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				src = tree
			}
			vc := capacity.VolcanoConfig{}
			if !tc.unlisted {
				vc = capacity.VolcanoConfigOf(tc.cms)
			}
			diags := capacity.VolcanoTree(enginetest.LoadSource(t, src), vc)
			if tc.want == "" {
				if len(diags) > 0 {
					t.Fatalf("diagnostics %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tc.want {
				t.Fatalf("diagnostics %v, want one %q", diags, tc.want)
			}
			wantSeverity := hcl.DiagError
			if tc.want == "Volcano's configuration not read" {
				wantSeverity = hcl.DiagWarning
			}
			if diags[0].Severity != wantSeverity {
				t.Errorf("%s has severity %v, want %v", tc.want, diags[0].Severity, wantSeverity)
			}
			if !strings.Contains(diags[0].Detail, "enableHierarchy: true") {
				t.Errorf("%s does not say what to add: %s", tc.want, diags[0].Detail)
			}
			if s := diags[0].Subject; s == nil || s.Start.Line != 9 {
				t.Errorf("%s at %v, want the first department (line 9)", tc.want, s)
			}
		})
	}
}

// TestPlanChecksVolcanoHierarchy: the capacity check plan runs carries
// the Volcano configuration's verdict (CheckFrom with what refresh read).
func TestPlanChecksVolcanoHierarchy(t *testing.T) {
	var dra capacity.DRAInventory
	dra.Volcano = capacity.VolcanoConfigOf([]*unstructured.Unstructured{volcanoConfigMap("volcano-system", capacity.VolcanoConfigMap, volcanoConf("  - name: proportion\n"))})
	_, diags := capacity.CheckFrom(enginetest.LoadSource(t, strings.Replace(volcanoTreeSrc, "SCHED", "volcano", 1)), nil, dra, nil, mig.Default())
	for _, d := range diags {
		if d.Summary == "Volcano's hierarchy off" {
			return
		}
	}
	t.Errorf("CheckFrom: %v, want Volcano's hierarchy off among them", diags)
}
