package sim

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
)

// ApplyUID is Apply, and returns the UID of the object stored.
func (c *Cluster) ApplyUID(ctx context.Context, obj *unstructured.Unstructured, force bool) (string, error) {
	if err := c.Apply(ctx, obj, force); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.objects[engine.KeyOf(obj)].GetUID()), nil
}

// inventoryConfigMaps returns copies of the ConfigMaps of stack's record;
// c.mu is held.
func (c *Cluster) inventoryConfigMaps(stack string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for k, u := range c.objects {
		if k.Group == "" && k.Kind == "ConfigMap" && k.Namespace == engine.LockNamespace && u.GetLabels()[engine.LabelInventory] == stack {
			out = append(out, u.DeepCopy())
		}
	}
	return out
}

// WriteInventory stores inv as the next version of its stack's record, as
// the Kubernetes provider does: its ConfigMaps in gpuform-system, the
// older versions removed.
func (c *Cluster) WriteInventory(_ context.Context, inv *engine.Inventory) error {
	cms, err := engine.InventoryConfigMaps(inv)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range engine.StaleInventory(inv.Stack, inv.Seq+1, c.inventoryConfigMaps(inv.Stack)) {
		delete(c.objects, engine.Key{Kind: "ConfigMap", Namespace: engine.LockNamespace, Name: name})
	}
	for _, cm := range cms {
		k := engine.KeyOf(cm)
		cm.SetUID(stableUID(k))
		cm.SetResourceVersion(strconv.Itoa(c.nextVersion()))
		c.objects[k] = cm
	}
	return c.save()
}
