package kubernetes

import (
	"context"
	"fmt"
	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"math/rand/v2"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// agentRequestTimeout bounds each read and write of the agent's node.
const agentRequestTimeout = 30 * time.Second

// NewAgentNode connects the agent on node name to the target's cluster
// (in a pod, its service account: see Resolve's InCluster), with the same
// configuration every gpuform client starts from (Target.RESTConfig), as
// user agent gpuform-agent and without a client-wide timeout, which would
// cut its watch: each request has its own deadline. wrap, when not nil,
// wraps the transport (request logs).
func NewAgentNode(t Target, name string, wrap func(http.RoundTripper) http.RoundTripper) (*AgentNode, error) {
	cfg, _, err := t.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "gpuform-agent"
	cfg.Timeout = 0
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build the Kubernetes client for %s: %w", cfg.Host, err)
	}
	return &AgentNode{cs: cs, name: name}, nil
}

// AgentNode is the gpuform agent's agentv1.NodeClient: its own Node through
// client-go.
type AgentNode struct {
	cs   k8s.Interface
	name string
}

func nodeInfo(n *corev1.Node) *agentv1.NodeInfo {
	return &agentv1.NodeInfo{ResourceVersion: n.ResourceVersion, Annotations: n.Annotations}
}

// Get reads the node.
func (a *AgentNode) Get(ctx context.Context) (*agentv1.NodeInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, agentRequestTimeout)
	defer cancel()
	n, err := a.cs.CoreV1().Nodes().Get(ctx, a.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return nodeInfo(n), nil
}

// Watch watches the one node (fieldSelector metadata.name), for 5 to 10
// minutes at a time so that connections are renewed.
func (a *AgentNode) Watch(ctx context.Context, resourceVersion string) (<-chan agentv1.NodeEvent, error) {
	timeout := int64(300 + rand.IntN(300))
	w, err := a.cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", a.name).String(),
		ResourceVersion: resourceVersion,
		TimeoutSeconds:  &timeout,
	})
	if err != nil {
		return nil, err
	}
	out := make(chan agentv1.NodeEvent)
	go func() {
		defer close(out)
		defer w.Stop()
		for {
			var ev watch.Event
			var ok bool
			select {
			case <-ctx.Done():
				return
			case ev, ok = <-w.ResultChan():
				if !ok {
					return
				}
			}
			var ne agentv1.NodeEvent
			switch ev.Type {
			case watch.Added, watch.Modified:
				n, isNode := ev.Object.(*corev1.Node)
				if !isNode {
					ne.Err = fmt.Errorf("unexpected watch object %T", ev.Object)
					break
				}
				ne.Node = nodeInfo(n)
			case watch.Deleted:
				ne.Deleted = true
			case watch.Error:
				ne.Err = apierrors.FromObject(ev.Object)
			default:
				continue
			}
			select {
			case out <- ne:
			case <-ctx.Done():
				return
			}
			if ne.Err != nil {
				return
			}
		}
	}()
	return out, nil
}

// Apply sets the agent's annotations with server-side apply, guarded by the
// node's current resourceVersion: server-side apply would otherwise create a
// Node that was deleted. A conflict (the node changed in between) reads it
// again.
func (a *AgentNode) Apply(ctx context.Context, annotations map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, agentRequestTimeout)
	defer cancel()
	for range 5 {
		cur, err := a.cs.CoreV1().Nodes().Get(ctx, a.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ac := corev1ac.Node(a.name).WithResourceVersion(cur.ResourceVersion).WithAnnotations(annotations)
		_, err = a.cs.CoreV1().Nodes().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: agentv1.FieldManager, Force: true})
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("node %s kept changing while the agent annotated it", a.name)
}
