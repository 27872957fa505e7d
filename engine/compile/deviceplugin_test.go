package compile_test

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// TestDevicePluginConfigs: the device-plugin configs gpuform writes for the
// examples' time-sliced and MPS pools, one file per pool under
// testdata/deviceplugin/configs/<case>/, with expect.yaml saying what
// gpuform assumes of each (the strategy, the replicas, the resource its
// quotas and models ask for, whether requests over one replica fail) and
// the MIG strategy the plugin runs with (mixed when a pool has a MIG
// layout: gpuform sets it in the ClusterPolicy; else the GPU Operator's
// default, single). They are goldens (go test ./engine/compile -update);
// the separate module testdata/deviceplugin runs NVIDIA's own config code
// (k8s-device-plugin v0.20.0) on them.
func TestDevicePluginConfigs(t *testing.T) {
	golden := enginetest.GoldenFiles(filepath.Join(enginetest.RepoRoot(t), "testdata", "deviceplugin", "configs"), update)
	for _, c := range []struct {
		name, example string
		replace       []string
		shared        int
	}{
		{"shared", "shared", nil, 2},
		// Each strategy off its default: failRequestsGreaterThanOne written.
		{"shared-off-defaults", "shared", []string{"    replicas = 4\n", "    replicas = 4\n    fail_requests_greater_than_one = false\n",
			"rename_by_default = true", "rename_by_default = true\n    fail_requests_greater_than_one = true"}, 2},
		{"bank", "bank", nil, -1},
		{"isolation", "isolation", nil, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := enginetest.LoadExample(t, c.example, c.replace...)
			d, err := compile.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var data map[string]any
			for _, o := range d.Objects {
				if o.Object.GetKind() == "ConfigMap" && o.Object.GetName() == engine.DevicePluginConf {
					data, _ = o.Object.Object["data"].(map[string]any)
				}
			}
			expect := map[string]any{"migStrategy": "single"}
			pools := map[string]any{}
			for _, p := range cfg.Pools {
				if p.MIGLayout != nil {
					expect["migStrategy"] = engine.MIGStrategyMixed
				}
				s := p.Shared()
				doc, ok := data[p.Name].(string)
				if s == nil {
					if ok {
						t.Errorf("pool %s shares nothing but has a device plugin config", p.Name)
					}
					continue
				}
				if !ok {
					t.Fatalf("no device plugin config for pool %s", p.Name)
				}
				golden(t, filepath.Join(c.name, p.Name+".yaml"), doc)
				pools[p.Name] = map[string]any{
					"strategy":                   map[string]string{"mps": "mps", "time_slicing": "time-slicing"}[p.Strategy()],
					"replicas":                   s.Replicas,
					"resource":                   capacity.GPUResource(p),
					"failRequestsGreaterThanOne": s.FailRequestsGreaterThanOne,
				}
			}
			if len(pools) == 0 || c.shared >= 0 && len(pools) != c.shared {
				t.Fatalf("%s has %d shared pools, want %d", c.example, len(pools), c.shared)
			}
			if len(data) != len(pools) {
				t.Errorf("the device plugin ConfigMap has %d configs for %d shared pools", len(data), len(pools))
			}
			expect["pools"] = pools
			out, err := yaml.Marshal(expect)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(c.name, "expect.yaml"), string(out))
		})
	}
}
