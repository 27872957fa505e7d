package compile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// pluginConfig is the NVIDIA device plugin's config file as its
// api/config/v1 package reads it (k8s-device-plugin v0.20.0, commit
// 1b826acc6af3079d8923bac395c3124b8861a9a6: config.go Config, sharing.go
// Sharing, replicas.go ReplicatedResources and ReplicatedResource), field
// for field, so that a strict decode refuses a field the plugin does not
// know. The module proxy does not serve the plugin's module, so the test
// states the format instead of importing it; pluginRules adds what its
// UnmarshalJSON methods refuse.
type pluginConfig struct {
	Version   string         `json:"version"`
	Flags     map[string]any `json:"flags,omitempty"`
	Resources map[string]any `json:"resources,omitempty"`
	Sharing   struct {
		TimeSlicing *pluginReplicated `json:"timeSlicing,omitempty"`
		MPS         *pluginReplicated `json:"mps,omitempty"`
	} `json:"sharing"`
	Imex map[string]any `json:"imex,omitempty"`
}

type pluginReplicated struct {
	RenameByDefault            bool  `json:"renameByDefault,omitempty"`
	FailRequestsGreaterThanOne *bool `json:"failRequestsGreaterThanOne,omitempty"`
	Resources                  []struct {
		Name     string `json:"name"`
		Rename   string `json:"rename,omitempty"`
		Devices  any    `json:"devices,omitempty"`
		Replicas *int   `json:"replicas"`
	} `json:"resources"`
}

// pluginRules is what the plugin refuses of a decoded config, or ignores
// (a rename or devices, dropped by DisableResourceNamingInConfig), as an
// error; strategy is the one sharing strategy it sets.
func pluginRules(c *pluginConfig) (strategy string, rr *pluginReplicated, err error) {
	if c.Version != "v1" {
		return "", nil, fmt.Errorf("unknown version: %v", c.Version)
	}
	switch {
	case c.Sharing.MPS != nil && c.Sharing.TimeSlicing != nil:
		return "", nil, fmt.Errorf("both timeSlicing and mps: the plugin would use mps and ignore timeSlicing")
	case c.Sharing.MPS != nil:
		strategy, rr = "mps", c.Sharing.MPS
	case c.Sharing.TimeSlicing != nil:
		strategy, rr = "timeSlicing", c.Sharing.TimeSlicing
	default:
		return "", nil, fmt.Errorf("no sharing strategy")
	}
	if len(rr.Resources) == 0 {
		return "", nil, fmt.Errorf("no resources specified")
	}
	for _, r := range rr.Resources {
		prefix, name, ok := strings.Cut(r.Name, "/")
		if !ok || prefix != "nvidia.com" || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return "", nil, fmt.Errorf("incorrect format for resource name %q", r.Name)
		}
		if r.Replicas == nil {
			return "", nil, fmt.Errorf("no replicas specified")
		}
		if *r.Replicas < 2 {
			return "", nil, fmt.Errorf("number of replicas must be >= 2")
		}
		if strategy == "mps" && *r.Replicas > 48 {
			return "", nil, fmt.Errorf("maximum allowed replicas exceeded: %d > 48", *r.Replicas)
		}
		if r.Rename != "" || r.Devices != nil {
			return "", nil, fmt.Errorf("rename and devices are ignored by the plugin")
		}
	}
	return strategy, rr, nil
}

// TestDevicePluginConfigsDecodeStrictly: every config gpuform writes for
// the shared example's pools decodes strictly into the plugin's format,
// passes its rules, and says what gpuform's quotas and models assume: the
// pool's strategy and replicas, renameByDefault exactly when the pool's
// resource is nvidia.com/gpu.shared, and requests of more than one
// replica refused as the pool says (the plugin's default, true for MPS
// and false for time-slicing, when the config leaves it out).
func TestDevicePluginConfigsDecodeStrictly(t *testing.T) {
	for _, replace := range [][]string{
		nil,
		// Each strategy off its default: failRequestsGreaterThanOne written.
		{"    replicas = 4\n", "    replicas = 4\n    fail_requests_greater_than_one = false\n",
			"rename_by_default = true", "rename_by_default = true\n    fail_requests_greater_than_one = true"},
	} {
		t.Run(fmt.Sprint(len(replace)), func(t *testing.T) { checkDevicePluginConfigs(t, replace) })
	}
}

func checkDevicePluginConfigs(t *testing.T, replace []string) {
	cfg := enginetest.LoadExample(t, "shared", replace...)
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
	shared := 0
	for _, p := range cfg.Pools {
		s := p.Shared()
		doc, ok := data[p.Name].(string)
		if s == nil {
			if ok {
				t.Errorf("pool %s shares nothing but has a device plugin config", p.Name)
			}
			continue
		}
		shared++
		if !ok {
			t.Fatalf("no device plugin config for pool %s", p.Name)
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		var c pluginConfig
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("pool %s: the plugin's format refuses the config: %v\n%s", p.Name, err, doc)
		}
		strategy, rr, err := pluginRules(&c)
		if err != nil {
			t.Fatalf("pool %s: %v\n%s", p.Name, err, doc)
		}
		wantStrategy := map[string]string{"mps": "mps", "time_slicing": "timeSlicing"}[p.Strategy()]
		if strategy != wantStrategy || *rr.Resources[0].Replicas != s.Replicas || rr.Resources[0].Name != engine.ResourceGPU {
			t.Errorf("pool %s: %s of %d %s, want %s of %d", p.Name, strategy, *rr.Resources[0].Replicas, rr.Resources[0].Name, wantStrategy, s.Replicas)
		}
		advertised := rr.Resources[0].Name
		if rr.RenameByDefault {
			advertised += ".shared" // api/config/v1/consts.go, DefaultSharedResourceNameSuffix
		}
		if want := capacity.GPUResource(p); advertised != want {
			t.Errorf("pool %s: the plugin advertises %s, gpuform's quotas and models ask for %s", p.Name, advertised, want)
		}
		failOne := strategy == "mps" // the plugin's default (config.go, NewConfig)
		if rr.FailRequestsGreaterThanOne != nil {
			failOne = *rr.FailRequestsGreaterThanOne
		}
		if failOne != s.FailRequestsGreaterThanOne {
			t.Errorf("pool %s: the plugin fails requests over one: %v, gpuform's validation assumes %v", p.Name, failOne, s.FailRequestsGreaterThanOne)
		}
	}
	if shared != 2 {
		t.Errorf("the shared example has %d shared pools, want 2 (MPS and time-slicing)", shared)
	}
}
