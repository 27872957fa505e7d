package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// ApplyNode sets gpuform's labels and annotations on Node obj with
// server-side apply, guarded by resourceVersion so that a Node deleted since
// the plan is an error, never re-created. When the node changed since (its
// resourceVersion moved), it re-reads that one node and applies again.
// Like Apply, it asks for strict field validation.
func (c *Client) ApplyNode(ctx context.Context, obj *unstructured.Unstructured, resourceVersion, fieldManager string) error {
	name := obj.GetName()
	for attempt := 0; attempt < 3; attempt++ {
		o := obj.DeepCopy()
		o.SetResourceVersion(resourceVersion)
		data, err := json.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("label node %s: encode: %w", name, err)
		}
		force := true
		_, err = c.dynamic.Resource(nodesGVR).Patch(ctx, name, types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: fieldManager, Force: &force, FieldValidation: metav1.FieldValidationStrict})
		if err == nil {
			return nil
		}
		if resourceVersion == "" {
			return fmt.Errorf("label node %s: %w", name, err)
		}
		// The precondition failed (or the create it would mean was refused):
		// find out whether the node moved or vanished.
		cur, gerr := c.dynamic.Resource(nodesGVR).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(gerr):
			return fmt.Errorf("label node %s: the node no longer exists (it did when planned); gpuform never creates Nodes", name)
		case gerr != nil:
			return fmt.Errorf("label node %s: %w", name, gerr)
		case cur.GetResourceVersion() == resourceVersion:
			return fmt.Errorf("label node %s: %w", name, err)
		}
		resourceVersion = cur.GetResourceVersion()
	}
	return fmt.Errorf("label node %s: it kept changing while gpuform labelled it; run apply again", name)
}

// WaitNode waits until node name's label or annotation key (a MIG state
// set by mig-manager or the gpuform agent) says "success". "failed..." and
// "reboot-required" end the wait with an error naming the node.
func (c *Client) WaitNode(ctx context.Context, name, key string) error {
	last := ""
	for {
		n, err := c.dynamic.Resource(nodesGVR).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("wait for node %s: the node was deleted while its MIG layout changed", name)
		case err == nil:
			state := n.GetLabels()[key]
			if v, ok := n.GetAnnotations()[key]; ok {
				state = v
			}
			last = state
			if done, err := migStateDone(name, key, state); done {
				return err
			}
		case ctx.Err() == nil:
			// transient read errors: keep waiting until the deadline
		}
		select {
		case <-ctx.Done():
			if last == "" {
				last = "not set"
			}
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("wait for node %s: interrupted while its MIG layout changed (%s is %s); run apply again to wait for it", name, key, last)
			}
			return fmt.Errorf("wait for node %s: its MIG layout was not applied in time (%s is %s); check the GPU Operator's mig-manager (or the gpuform agent) on that node, then run apply again", name, key, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// migStateDone interprets a MIG state value.
func migStateDone(node, key, state string) (bool, error) {
	switch {
	case state == "success":
		return true, nil
	case state == "reboot-required":
		return true, fmt.Errorf("node %s needs a reboot to change its GPUs' MIG mode; drain and reboot it, then run apply again", node)
	case strings.HasPrefix(state, "failed"):
		return true, fmt.Errorf("node %s failed to apply its MIG layout (%s=%s)", node, key, state)
	}
	return false, nil
}

// GPUPods returns, for each named node, the running or pending pods that
// request GPUs or MIG slices there: one LIST per node with a field
// selector, made only for nodes a plan re-partitions.
func (c *Client) GPUPods(ctx context.Context, nodes []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, n := range nodes {
		pods, err := c.typed.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			return nil, c.explain("list the pods on node "+n, err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase != "Running" && p.Status.Phase != "Pending" {
				continue
			}
			if podUsesGPU(&p) {
				out[n] = append(out[n], p.Namespace+"/"+p.Name)
			}
		}
	}
	return out, nil
}

// podUsesGPU reports whether pod p uses a GPU: a container (or init
// container) requests an nvidia.com resource, or the pod holds
// ResourceClaims (DRA devices, which on a GPU node are its GPUs).
func podUsesGPU(p *corev1.Pod) bool {
	return len(p.Spec.ResourceClaims) > 0 || usesGPU(p.Spec.Containers) || usesGPU(p.Spec.InitContainers)
}

// usesGPU reports whether a container requests nvidia.com/gpu or a MIG slice.
func usesGPU(cs []corev1.Container) bool {
	for _, c := range cs {
		for r := range c.Resources.Limits {
			if strings.HasPrefix(string(r), "nvidia.com/") {
				return true
			}
		}
		for r := range c.Resources.Requests {
			if strings.HasPrefix(string(r), "nvidia.com/") {
				return true
			}
		}
	}
	return false
}
