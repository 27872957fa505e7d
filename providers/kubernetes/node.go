package kubernetes

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// ApplyNode sets gpuform's labels and annotations on Node obj with
// server-side apply, guarded by resourceVersion so that a Node deleted since
// the plan is an error, never re-created. When the node changed since (its
// resourceVersion moved), it re-reads that one node and applies again.
func (c *Client) ApplyNode(ctx context.Context, obj *unstructured.Unstructured, resourceVersion, fieldManager string) error {
	name := obj.GetName()
	for attempt := 0; attempt < 3; attempt++ {
		o := obj.DeepCopy()
		o.SetResourceVersion(resourceVersion)
		_, err := c.dynamic.Resource(nodesGVR).Apply(ctx, name, o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
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
