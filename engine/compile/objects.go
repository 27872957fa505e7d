package compile

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// anySensitive reports whether a block holds a value of a sensitive variable.
func anySensitive(m *config.Meta) bool { return len(m.Sensitive) > 0 }

// tenantSensitive reports whether a tenant or any of its quota blocks holds
// a value of a sensitive variable.
func tenantSensitive(t *config.Tenant) bool {
	return anySensitive(&t.Meta) || slices.ContainsFunc(t.Quotas, func(q *config.Quota) bool { return anySensitive(&q.Meta) })
}

// newObject starts an unstructured object of kind k with the ownership
// metadata; its apiVersion is the registry's (engine/kinds).
func newObject(k engine.Kind, namespace, name, stack, address string) *unstructured.Unstructured {
	meta := map[string]any{
		"name": name,
		"labels": map[string]any{
			engine.LabelManagedBy: engine.ManagedByValue,
			engine.LabelStack:     stack,
		},
		"annotations": map[string]any{
			engine.AnnotAddress: address,
		},
	}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.GroupVersion().String(),
		"kind":       k.Kind,
		"metadata":   meta,
	}}
}
