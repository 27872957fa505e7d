package compile

import (
	"fmt"
	"maps"

	"sigs.k8s.io/yaml"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// gpuOperator is MIG backend "gpu-operator": the GPU Operator's mig-manager
// partitions a node when its label nvidia.com/mig.config names a config of
// the mig-parted ConfigMap gpuform-mig-parted, which holds every MIG pool's
// layout, and reports the outcome in label nvidia.com/mig.config.state.
type gpuOperator struct {
	stack, namespace string
	// configs are the mig-parted configs of the pools seen, by name.
	configs map[string]any
}

func newGPUOperator(s *config.Settings) MIGBackend {
	return &gpuOperator{stack: s.Stack, namespace: s.GPUOperatorNamespace, configs: map[string]any{}}
}

// configMap is the key of the mig-parted ConfigMap.
func (g *gpuOperator) configMap() engine.Key {
	return engine.KeyFor(engine.KindConfigMap, g.namespace, engine.MIGPartedConfig)
}

// Pool labels the pool's nodes with the name of its layout's config.
func (g *gpuOperator) Pool(p *config.Pool, np *engine.NodePool) error {
	name, conf := engine.MIGPartedName(p.MIGLayout)
	np.Labels[engine.LabelMIGConfig] = name
	np.MIGState = engine.LabelMIGState
	g.configs[name] = conf
	np.DependsOn = append(np.DependsOn, g.configMap())
	return nil
}

// Objects is the mig-parted ConfigMap, when a pool has a MIG layout.
func (g *gpuOperator) Objects() ([]*engine.Object, error) {
	if len(g.configs) == 0 {
		return nil, nil
	}
	configs := make(map[string]any, len(g.configs)+2)
	maps.Copy(configs, g.configs)
	// Keep the operator's own off/on configs so nodes can be reset.
	configs["all-disabled"] = []any{map[string]any{"devices": "all", "mig-enabled": false}}
	configs["all-enabled"] = []any{map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": map[string]any{}}}
	doc, err := yaml.Marshal(map[string]any{"version": "v1", "mig-configs": configs})
	if err != nil {
		return nil, fmt.Errorf("compile mig-parted config: %w", err)
	}
	cm := newObject(engine.KindConfigMap, g.namespace, engine.MIGPartedConfig, g.stack, engine.StackAddress)
	cm.Object["data"] = map[string]any{"config.yaml": string(doc)}
	return []*engine.Object{{Object: cm}}, nil
}

// Model makes a model that asks for a slice wait for the mig-parted
// ConfigMap.
func (g *gpuOperator) Model(w *Workload) {
	if w.Model.Slice != "" {
		w.DependsOn = append(w.DependsOn, g.configMap())
	}
}
