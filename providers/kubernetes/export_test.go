package kubernetes

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// KeepWhole makes c's refreshes settle nothing, keeping every object of
// the stack whole as before settling, for tests that compare the two.
func KeepWhole(c *Client) { c.keepWhole = true }

// MappingOf resolves gvk to its REST resource, as c does.
func MappingOf(c *Client, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return c.mapping(engine.Kind{GroupVersionKind: gvk})
}
