package kubernetes

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// Apply writes obj with server-side apply as field manager gpuform. force
// takes over fields another manager owns; use it only for objects gpuform
// owns or adopts.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	k := engine.KeyOf(obj)
	m, err := c.mapping(engine.Kind{GroupVersionKind: gvk})
	if err != nil {
		return nil, c.explain("apply "+k.String(), err)
	}
	ri := c.dynamic.Resource(m.Resource)
	var res *unstructured.Unstructured
	opts := metav1.ApplyOptions{FieldManager: engine.FieldManager, Force: force}
	if ns := obj.GetNamespace(); ns != "" {
		res, err = ri.Namespace(ns).Apply(ctx, obj.GetName(), obj, opts)
	} else {
		res, err = ri.Apply(ctx, obj.GetName(), obj, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("apply %s: %w", k, err)
	}
	return res, nil
}

// Delete removes the object with key k and apiVersion with foreground
// propagation, so its dependents go first.
func (c *Client) Delete(ctx context.Context, k engine.Key, apiVersion string) error {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("delete %s: %w", k, err)
	}
	m, err := c.mapper.RESTMapping(schemaGroupKind(k), gv.Version)
	if err != nil {
		return c.explain("delete "+k.String(), err)
	}
	fg := metav1.DeletePropagationForeground
	ri := c.dynamic.Resource(m.Resource)
	opts := metav1.DeleteOptions{PropagationPolicy: &fg}
	if k.Namespace != "" {
		err = ri.Namespace(k.Namespace).Delete(ctx, k.Name, opts)
	} else {
		err = ri.Delete(ctx, k.Name, opts)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", k, err)
	}
	return nil
}

func schemaGroupKind(k engine.Key) schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}
