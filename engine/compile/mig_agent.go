package compile

import (
	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// agent is MIG backend "agent": the gpuform agent on each node applies the
// layout in the node's annotation gpuform.dev/mig-layout and reports the
// outcome in annotation gpuform.dev/mig-state. It needs no ConfigMap.
type agent struct{}

func newAgent(*config.Settings) MIGBackend { return agent{} }

// Pool annotates the pool's nodes with the layout itself, and turns the
// GPU Operator's mig-manager off on them: without its nvidia.com/mig.config
// label (which this backend does not set, and removes when a pool switches
// from gpu-operator) the operator labels a MIG-capable node all-disabled,
// and its mig-manager would then undo the agent's layout. The operator
// keeps a nvidia.com/gpu.deploy.mig-manager value it finds, and runs
// mig-manager only where it is "true".
func (agent) Pool(p *config.Pool, np *engine.NodePool) error {
	layout, err := engine.AgentLayout(p.MIGLayout)
	if err != nil {
		return err
	}
	np.Labels[engine.LabelDeployMIGManager] = "false"
	np.Annotations = map[string]string{agentv1.AnnotMIGLayout: layout}
	np.MIGState = agentv1.AnnotMIGState
	return nil
}

// Objects is none: the layout travels in the node annotation.
func (agent) Objects() ([]*engine.Object, error) { return nil, nil }

// Model adds nothing: the agent needs no object before a model.
func (agent) Model(*Workload) {}
