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
// nvidia.com/device-plugin.config names it; a time-sliced pool's config
// advertises each GPU as several.
type devicePlugin struct {
	stack, namespace string
	// configs are the device-plugin configs of the pools seen, by pool name.
	configs map[string]any
}

func newDevicePlugin(s *config.Settings) *devicePlugin {
	return &devicePlugin{stack: s.Stack, namespace: s.GPUOperatorNamespace, configs: map[string]any{}}
}

// Pool labels the nodes of a time-sliced pool with its config's name.
func (d *devicePlugin) Pool(p *config.Pool, np *engine.NodePool) {
	np.Labels[engine.LabelDPConfig] = p.Name
	d.configs[p.Name] = map[string]any{
		"version": "v1",
		"sharing": map[string]any{"timeSlicing": map[string]any{"resources": []any{
			map[string]any{"name": engine.ResourceGPU, "replicas": int64(p.TimeSlicing.Replicas)},
		}}},
	}
	np.DependsOn = append(np.DependsOn, engine.Key{Kind: "ConfigMap", Namespace: d.namespace, Name: engine.DevicePluginConf})
}

// Objects is the device plugin's ConfigMap, when a pool is time-sliced.
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
	cm := newObject("v1", "ConfigMap", d.namespace, engine.DevicePluginConf, d.stack, engine.StackAddress)
	cm.Object["data"] = data
	return []*engine.Object{{Object: cm}}, nil
}
