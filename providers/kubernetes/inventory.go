package kubernetes

import (
	"context"
	"encoding/base64"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuform/gpuform/engine"
)

// inventorySelector selects the ConfigMaps of stack's record.
func inventorySelector(stack string) string { return engine.LabelInventory + "=" + stack }

// inventoryConfigMaps lists the ConfigMaps of stack's record: one LIST in
// engine.LockNamespace (never cluster-wide: a tenant may label a ConfigMap
// of its own namespace as it likes). A stack name that is no label value
// (the "-" of a refresh that reads only Nodes) has none.
func (c *Client) inventoryConfigMaps(ctx context.Context, stack string) ([]*unstructured.Unstructured, error) {
	if len(validation.IsValidLabelValue(stack)) > 0 || stack == "" {
		return nil, nil
	}
	list, err := c.typed.CoreV1().ConfigMaps(engine.LockNamespace).List(ctx, metav1.ListOptions{LabelSelector: inventorySelector(stack)})
	if err != nil {
		return nil, c.explain("list the inventory of stack "+stack+" (ConfigMaps in "+engine.LockNamespace+")", err)
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for _, cm := range list.Items {
		labels := map[string]any{}
		for k, v := range cm.Labels {
			labels[k] = v
		}
		data := map[string]any{}
		for k, v := range cm.BinaryData {
			data[k] = base64.StdEncoding.EncodeToString(v)
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata":   map[string]any{"name": cm.Name, "namespace": cm.Namespace, "labels": labels},
			"binaryData": data,
		}})
	}
	return out, nil
}

// readInventory reads stack's record (engine.ReadInventory): nil when
// there is none.
func (c *Client) readInventory(ctx context.Context, stack string) (*engine.Inventory, error) {
	cms, err := c.inventoryConfigMaps(ctx, stack)
	if err != nil {
		return nil, err
	}
	return engine.ReadInventory(stack, cms)
}

// WriteInventory stores inv as the next version of its stack's record:
// each shard by server-side apply, then the older versions deleted. A
// reader takes the newest complete version, so a write cut short leaves
// the previous record readable.
func (c *Client) WriteInventory(ctx context.Context, inv *engine.Inventory) error {
	cms, err := engine.InventoryConfigMaps(inv)
	if err != nil {
		return err
	}
	if err := retryTransient(ctx, lockAttempts, func() error { return c.ensureNamespace(ctx, engine.LockNamespace) }); err != nil {
		return c.explain("create namespace "+engine.LockNamespace+" for the inventory", err)
	}
	for _, cm := range cms {
		if err := retryTransient(ctx, lockAttempts, func() error { return c.Apply(ctx, cm, true) }); err != nil {
			return err
		}
	}
	old, err := c.inventoryConfigMaps(ctx, inv.Stack)
	if err != nil {
		return err
	}
	for _, name := range engine.StaleInventory(inv.Stack, inv.Seq+1, old) {
		err := retryTransient(ctx, lockAttempts, func() error {
			err := c.typed.CoreV1().ConfigMaps(engine.LockNamespace).Delete(ctx, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil // gone already (an earlier try whose answer was lost)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("delete the old inventory %s/%s: %w", engine.LockNamespace, name, err)
		}
	}
	return nil
}
