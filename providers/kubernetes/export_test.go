package kubernetes

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
)

// KeepWhole makes c's refreshes settle nothing, keeping every object of
// the stack whole as before settling, for tests that compare the two.
func KeepWhole(c *Client) { c.keepWhole = true }

// MappingOf resolves gvk to its REST resource, as c does.
func MappingOf(c *Client, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return c.mapping(engine.Kind{GroupVersionKind: gvk})
}

// ListItems cuts a LIST response read whole into its items, as a refresh
// does.
func ListItems(data []byte) ([][]byte, error) {
	var items [][]byte
	err := newBytesCutter(data).list(func(raw []byte) { items = append(items, raw) }, func([]byte) error { return nil })
	return items, err
}

// CompileDir loads and compiles the configuration in dir.
func CompileDir(tb testing.TB, dir string) *engine.Desired {
	tb.Helper()
	cfg, diags := config.LoadDir(dir, config.Options{})
	if diags.HasErrors() {
		tb.Fatal(diags.Error())
	}
	d, err := compile.Compile(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
