package capacity_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestModeSwitches: a pool is switching when its mode differs from what
// is applied: a DRA pool whose DeviceClasses are not applied, on nodes
// where the device plugin still advertises nvidia.com resources, moves to
// DRA; a device-plugin pool whose DeviceClasses are applied moves back. A
// DRA pool already applied, or new on nodes the device plugin does not
// serve, and a device-plugin pool that never had classes, are not.
func TestModeSwitches(t *testing.T) {
	src := func(mode string) string {
		return `
gpuform { stack = "cap" }
pool "h100" {
  gpu           = "H100-80GB"
  mode          = "` + mode + `"
  node_selector = { "gpuform.dev/node-group" = "h100" }
}
`
	}
	cases := []struct {
		name    string
		mode    string
		plugin  bool
		applied bool
		want    []capacity.ModeSwitch
	}{
		{"to DRA on the device plugin's nodes", "dra", true, false, []capacity.ModeSwitch{{ToDRA: true, Nodes: []string{"h100-0", "h100-1"}}}},
		{"DRA, new on nodes without the device plugin", "dra", false, false, nil},
		{"DRA, applied", "dra", true, true, nil},
		{"back to the device plugin", "device_plugin", false, true, []capacity.ModeSwitch{{Nodes: []string{"h100-0", "h100-1"}}}},
		{"device plugin, never DRA", "device_plugin", true, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := enginetest.LoadSource(t, src(tc.mode))
			nodes := []*unstructured.Unstructured{advertising("h100-0", tc.plugin), advertising("h100-1", tc.plugin), advertising("other-0", true)}
			_ = unstructured.SetNestedField(nodes[2].Object, "other", "metadata", "labels", "gpuform.dev/node-group")
			applied := map[string]bool{}
			if tc.applied {
				applied[cfg.Pools[0].Address] = true
			}
			got := capacity.ModeSwitches(cfg, nodes, applied)
			for i := range got {
				if got[i].Pool != cfg.Pools[0] {
					t.Fatalf("switch of pool %v, want %s", got[i].Pool, cfg.Pools[0].Address)
				}
				got[i].Pool = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("switches %+v, want %+v", got, tc.want)
			}
		})
	}
}
