package compile

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// devicePlugin is how pools share whole GPUs, whichever MIG backend the
// stack has: the NVIDIA device plugin (deployed by the GPU Operator) reads a
// named config from ConfigMap gpuform-device-plugin for nodes whose label
// nvidia.com/device-plugin.config names it; a time-sliced or MPS pool's
// config advertises each GPU as several (k8s-device-plugin v0.20.0,
// api/config/v1: Config.Sharing.TimeSlicing or .MPS, a ReplicatedResources).
type devicePlugin struct {
	stack, namespace string
	// configs are the device-plugin configs of the pools seen, by pool name.
	configs map[string]any
}

func newDevicePlugin(s *config.Settings) *devicePlugin {
	return &devicePlugin{stack: s.Stack, namespace: s.GPUOperatorNamespace, configs: map[string]any{}}
}

// Pool labels the nodes of a time-sliced or MPS pool with its config's
// name. The config names one strategy (the plugin uses MPS when both are
// set), writes failRequestsGreaterThanOne only when it is not the plugin's
// default for the strategy (true for MPS, false for time-slicing:
// api/config/v1/config.go, NewConfig) and renameByDefault only when set: the plugin then advertises the replicas
// as nvidia.com/gpu.shared. It ignores per-resource renames and devices in
// v0.20.0 (DisableResourceNamingInConfig), so gpuform writes neither.
// testdata/deviceplugin runs the plugin's own code on these configs.
func (d *devicePlugin) Pool(p *config.Pool, np *engine.NodePool) {
	np.Labels[engine.LabelDPConfig] = p.Name
	s := p.Shared()
	rr := map[string]any{"resources": []any{
		map[string]any{"name": engine.ResourceGPU, "replicas": int64(s.Replicas)},
	}}
	if s.RenameByDefault {
		rr["renameByDefault"] = true
	}
	strategy := "timeSlicing"
	if p.MPS != nil {
		strategy = "mps"
	}
	if s.FailRequestsGreaterThanOne != (p.MPS != nil) {
		rr["failRequestsGreaterThanOne"] = s.FailRequestsGreaterThanOne
	}
	d.configs[p.Name] = map[string]any{
		"version": "v1",
		"sharing": map[string]any{strategy: rr},
	}
	np.DependsOn = append(np.DependsOn, engine.KeyFor(engine.KindConfigMap, d.namespace, engine.DevicePluginConf))
}

// Objects is the device plugin's ConfigMap, when a pool is time-sliced or MPS.
func (d *devicePlugin) Objects() ([]*engine.Object, error) {
	if len(d.configs) == 0 {
		return nil, nil
	}
	data := map[string]any{}
	for name, conf := range d.configs {
		doc, err := yaml.Marshal(conf)
		if err != nil {
			return nil, fmt.Errorf("compile device-plugin config %s: %w", name, err)
		}
		data[name] = string(doc)
	}
	cm := newObject(engine.KindConfigMap, d.namespace, engine.DevicePluginConf, d.stack, engine.StackAddress)
	cm.Object["data"] = data
	return []*engine.Object{{Object: cm}}, nil
}
