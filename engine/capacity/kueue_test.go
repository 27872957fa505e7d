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

// kueueConfigMap is a ConfigMap named name in ns holding Kueue's
// configuration doc, as Kueue's standard install writes it.
func kueueConfigMap(ns, name, doc string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     map[string]any{capacity.KueueConfigKey: doc},
	}}
}

// The DeviceClasses of draSrc's pools and their device-quota resources.
const (
	kqA100 = "gpuform-cap-a100-1g-10gb"
	kqH100 = "gpuform-cap-h100-gpu"
)

// kueueDoc is a Kueue Configuration with gates (a YAML map body, or
// empty) and a mapping of each class to resource[class] (the class's own
// device-quota resource when not given).
func kueueDoc(gates string, resource map[string]string, classes ...string) string {
	doc := "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nnamespace: kueue-system\n"
	if gates != "" {
		doc += "featureGates:\n  " + gates + "\n"
	}
	if len(classes) > 0 {
		doc += "resources:\n  deviceClassMappings:\n"
		for _, c := range classes {
			r := resource[c]
			if r == "" {
				r = capacity.DeviceClassQuota(c)
			}
			doc += "  - name: " + r + "\n    deviceClassNames: [" + c + "]\n"
		}
	}
	return doc
}

// TestKueueCountsTheDRAPools: under scheduler = "kueue", plan reads Kueue's
// configuration (ConfigMap kueue-manager-config): it says whether each
// DeviceClass the ClusterQueues hold quota of is mapped to its device-quota
// resource, refuses a DRA pool whose classes a readable configuration does
// not map (or maps to another resource) and a configuration that turns the
// DRA gate off, and warns when no configuration can be read (absent,
// ambiguous, unparsable), the ResourceQuota still bounding each tenant.
func TestKueueCountsTheDRAPools(t *testing.T) {
	kueueSrc := strings.Replace(draSrc("7", "1"), `gpuform { stack = "cap" }`, "gpuform {\n  stack     = \"cap\"\n  scheduler = \"kueue\"\n}", 1)
	both := kueueDoc("DynamicResourceAllocation: true", nil, kqA100, kqH100)
	cases := []struct {
		name     string
		src      string
		cms      []*unstructured.Unstructured
		unlisted bool
		sentence string // in the plan's Kueue line; "-" for none
		errs     []string
		warning  string
	}{
		{name: "both classes mapped, v0.17 gate on", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, both)},
			sentence: "configuration kueue-system/kueue-manager-config maps 2 of the 2 DeviceClasses the ClusterQueues hold quota of; its DRA feature gate is on"},
		{name: "both mapped, no gate (v0.18 default)", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, kueueDoc("", nil, kqA100, kqH100))},
			sentence: "maps 2 of the 2 DeviceClasses the ClusterQueues hold quota of; it sets no DRA feature gate (KueueDRAIntegration is on by default from Kueue v0.18"},
		{name: "Helm release in another namespace", cms: []*unstructured.Unstructured{kueueConfigMap("kueue", capacity.KueueConfigMap, both)},
			sentence: "configuration kueue/kueue-manager-config maps 2 of the 2"},
		{name: "kueue-system's wins over another namespace's", cms: []*unstructured.Unstructured{
			kueueConfigMap("elsewhere", capacity.KueueConfigMap, kueueDoc("", nil)),
			kueueConfigMap("kueue-system", capacity.KueueConfigMap, both),
			kueueConfigMap("kueue-system", "other", kueueDoc("", nil)),
		}, sentence: "kueue-system/kueue-manager-config maps 2 of the 2"},
		{name: "H100 class not mapped", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, kueueDoc("KueueDRAIntegration: true", nil, kqA100))},
			sentence: "maps 1 of the 2",
			errs:     []string{"DeviceClasses Kueue does not count", "Pool h100 is a DRA pool", "does not map its DeviceClasses " + kqH100 + " to", "- name: " + kqH100 + ".deviceclass.resource.k8s.io/devices\n    deviceClassNames: [" + kqH100 + "]"}},
		{name: "A100 class mapped to another resource", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, kueueDoc("", map[string]string{kqA100: "example.com/gpus"}, kqA100, kqH100))},
			sentence: "maps 1 of the 2", errs: []string{"Pool a100 is a DRA pool", "DeviceClasses " + kqA100 + " to"}},
		{name: "no mapping at all", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, kueueDoc("", nil))},
			sentence: "maps 0 of the 2", errs: []string{"Pool a100", "Pool h100"}},
		{name: "gate off", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, kueueDoc("KueueDRAIntegration: false", nil, kqA100, kqH100))},
			sentence: "its DRA feature gate is off", errs: []string{"Kueue's DRA feature gate off", "sets its DRA feature gate off"}},
		{name: "no ConfigMap", sentence: "configuration not read (no ConfigMap kueue-manager-config in kueue-system or another namespace)",
			warning: "Each tenant's ResourceQuota still bounds the devices it claims per DeviceClass"},
		{name: "two outside kueue-system", cms: []*unstructured.Unstructured{kueueConfigMap("a", capacity.KueueConfigMap, both), kueueConfigMap("b", capacity.KueueConfigMap, both)},
			sentence: "ConfigMaps kueue-manager-config in namespaces a, b, none in kueue-system", warning: "Kueue's configuration not read"},
		{name: "unparsable", cms: []*unstructured.Unstructured{kueueConfigMap("kueue-system", capacity.KueueConfigMap, "featureGates: [")},
			sentence: "configuration not read (ConfigMap kueue-system/kueue-manager-config, key controller_manager_config.yaml:", warning: "Kueue's configuration not read"},
		{name: "not Kueue's key", cms: []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": capacity.KueueConfigMap, "namespace": "kueue-system"}, "data": map[string]any{"config.yaml": both}}}},
			sentence: "has no key controller_manager_config.yaml", warning: "Kueue's configuration not read"},
		{name: "scheduler none", src: draSrc("7", "1"), sentence: "-"},
		{name: "not looked for", unlisted: true, sentence: "-"},
	}
	items := []*unstructured.Unstructured{
		draNode("a100-0", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"),
		draNode("a100-1", "NVIDIA A100-SXM4-80GB", 1, "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"),
		draNode("h100-0", "NVIDIA H100 80GB HBM3", 2),
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				src = kueueSrc
			}
			dra := capacity.DRADevicesOf(items, true)
			if !tc.unlisted {
				dra.Kueue = capacity.KueueConfigOf(tc.cms)
			}
			rep, diags := capacity.CheckFrom(enginetest.LoadSource(t, src), draNodes(), dra, nil, mig.Default())
			if tc.sentence == "-" {
				if rep.Kueue != "" || diags.HasErrors() {
					t.Errorf("Kueue %q, diagnostics %v; want neither", rep.Kueue, diags)
				}
				return
			}
			if !strings.Contains(rep.Kueue, tc.sentence) {
				t.Errorf("Kueue %q, want it to say %q", rep.Kueue, tc.sentence)
			}
			var errs, warned string
			for _, d := range diags {
				switch {
				case d.Severity == hcl.DiagError:
					errs += d.Summary + ": " + d.Detail + "\n"
				case d.Summary == "Kueue's configuration not read":
					warned += d.Summary + ": " + d.Detail
				}
			}
			for _, e := range tc.errs {
				if !strings.Contains(errs, e) {
					t.Errorf("errors %q, want one saying %q", errs, e)
				}
			}
			if len(tc.errs) == 0 && errs != "" {
				t.Errorf("errors %q, want none", errs)
			}
			if tc.warning != "" && !strings.Contains(warned, tc.warning) {
				t.Errorf("warnings %q, want %q", warned, tc.warning)
			}
			if tc.warning == "" && warned != "" {
				t.Errorf("warned %q, want no warning", warned)
			}
		})
	}
}
