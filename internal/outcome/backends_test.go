package outcome

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine"
)

// switchConfig is one MIG pool on the given MIG backend.
const switchConfig = `
gpuform {
  stack       = "switch"
  mig_backend = "%s"
}

mig_layout "halves" {
  gpu    = "A100-80GB"
  slices = { "3g.40gb" = 2 }
}

pool "switch-a100" {
  gpu           = "A100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "switch-a100" }
  mig_layout    = mig_layout.halves
}
`

// playOperatorLabels does once what the GPU Operator does to a
// MIG-capable node's labels on every reconcile: it adds
// nvidia.com/gpu.deploy.mig-manager=true unless the label is there (with
// any value), and, with no nvidia.com/mig.config label, labels it
// all-disabled (the chart's default MIG config). Its mig-manager
// DaemonSet runs on the nodes labelled deploy.mig-manager=true.
func playOperatorLabels(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	// As a controller does, read again and retry when the node changed in
	// between (the node controllers of the harness update new nodes too).
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := n.Labels[engine.LabelDeployMIGManager]; !ok {
			n.Labels[engine.LabelDeployMIGManager] = "true"
		}
		if n.Labels[engine.LabelMIGConfig] == "" {
			n.Labels[engine.LabelMIGConfig] = "all-disabled"
		}
		_, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "gpu-operator"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSwitchToAgentStopsMIGManager: a MIG pool moved from the GPU
// Operator's mig-manager to the gpuform agent loses gpuform's mig.config
// label, so the operator labels its node all-disabled; the node must then
// carry nvidia.com/gpu.deploy.mig-manager=false (which the operator keeps)
// so that no mig-manager runs there to disable what the agent partitions.
// Fails without issue 14 item 5.
func TestSwitchToAgentStopsMIGManager(t *testing.T) {
	const node = "switch-a100-0"
	createNodes(t, gpuNode(node, "NVIDIA-A100-SXM4-80GB", map[string]string{"outcome.gpuform.dev/group": "switch-a100", "nvidia.com/mig.capable": "true"}, map[string]string{"nvidia.com/mig-3g.40gb": "2"}))
	playOperatorLabels(t, node)
	ctx := context.Background()
	labels := func() map[string]string {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Labels
	}

	apply(t, fmt.Sprintf(switchConfig, "gpu-operator"))
	if l := labels(); !strings.HasPrefix(l[engine.LabelMIGConfig], "halves") || l[engine.LabelDeployMIGManager] != "true" {
		t.Fatalf("on the gpu-operator backend: %s=%q, %s=%q; want gpuform's layout and the operator's mig-manager", engine.LabelMIGConfig, l[engine.LabelMIGConfig], engine.LabelDeployMIGManager, l[engine.LabelDeployMIGManager])
	}

	apply(t, fmt.Sprintf(switchConfig, "agent"))
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Annotations[agentv1.AnnotMIGLayout] == "" || n.Labels[engine.LabelMIGConfig] != "" {
		t.Fatalf("on the agent backend: layout annotation %q, %s=%q; want the layout for the agent and gpuform's mig.config label gone", n.Annotations[agentv1.AnnotMIGLayout], engine.LabelMIGConfig, n.Labels[engine.LabelMIGConfig])
	}
	playOperatorLabels(t, node)
	if l := labels(); l[engine.LabelDeployMIGManager] != "false" {
		t.Errorf("after the switch the operator labelled the node %s=%q and %s=%q: its mig-manager would disable MIG under the agent", engine.LabelMIGConfig, l[engine.LabelMIGConfig], engine.LabelDeployMIGManager, l[engine.LabelDeployMIGManager])
	}
	cp := get(t, clusterPolicyGVR, "", "cluster-policy")
	if name, _, _ := unstructured.NestedString(cp.Object, "spec", "migManager", "config", "name"); name != "" {
		t.Errorf("the ClusterPolicy points mig-manager at %q, want the GPU Operator's default (no name)", name)
	}
	if s, _, _ := unstructured.NestedString(cp.Object, "spec", "mig", "strategy"); s != engine.MIGStrategyMixed {
		t.Errorf("the ClusterPolicy's mig.strategy is %q under the agent, want %q: the operator's device plugin still advertises the slices", s, engine.MIGStrategyMixed)
	}
}
