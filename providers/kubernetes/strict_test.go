package kubernetes_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

// TestWritesAskForStrictValidation: every server-side apply gpuform sends,
// of an object and of a Node's labels, asks for fieldValidation=Strict, so
// a field the schema does not know fails the change rather than being
// dropped with a warning.
func TestWritesAskForStrictValidation(t *testing.T) {
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.CreateNodes(ctx, cfg, kubeapitest.GPUNode{Name: "strict-0", Capacity: map[string]string{"cpu": "8"}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var patches []string
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch {
				mu.Lock()
				patches = append(patches, r.URL.Path+"?"+r.URL.RawQuery)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "strict", "namespace": "default"}, "data": map[string]any{"a": "b"}}}
	if err := c.Apply(ctx, cm, false); err != nil {
		t.Fatal(err)
	}
	node := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "strict-0", "labels": map[string]any{"gpuform.dev/pool": "strict"}}}}
	if err := c.ApplyNode(ctx, node, "", "gpuform-strict"); err != nil {
		t.Fatal(err)
	}
	// A field the schema lacks is refused, and named.
	bad := cm.DeepCopy()
	bad.Object["spec"] = map[string]any{"x": "y"}
	if err := c.Apply(ctx, bad, false); err == nil || !strings.Contains(err.Error(), ".spec") {
		t.Errorf("apply with an unknown field: %v, want an error naming it", err)
	}
	if len(patches) != 3 {
		t.Fatalf("%d PATCH requests, want 3: %q", len(patches), patches)
	}
	for _, p := range patches {
		if !strings.Contains(p, "fieldValidation=Strict") {
			t.Errorf("PATCH %s does not ask for strict field validation", p)
		}
	}
}
