package kubernetes_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestRefreshFindsAnOlderAPIVersion: a cluster with Kueue's ClusterQueue
// CRD as releases before v0.15 serve it (kueue.x-k8s.io/v1beta1 only; here
// the upstream CRD with its v1beta2 version taken out) is not one without
// Kueue: refresh reports the version it does serve, and the plan fails
// saying what to upgrade, rather than "install Kueue".
func TestRefreshFindsAnOlderAPIVersion(t *testing.T) {
	ctx := kubeapitest.Context(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := kubeapitest.CRDs(ctx, "kueue")
	if err != nil {
		t.Fatal(err)
	}
	var cq *unstructured.Unstructured
	for _, c := range crds {
		if c.GetName() == "clusterqueues.kueue.x-k8s.io" {
			cq = c
		}
	}
	if cq == nil {
		t.Fatal("no ClusterQueue CRD in the kueue set")
	}
	versions, _, _ := unstructured.NestedSlice(cq.Object, "spec", "versions")
	var old []any
	for _, v := range versions {
		vm := v.(map[string]any)
		if vm["name"] == "v1beta1" {
			vm["storage"] = true
			old = append(old, vm)
		}
	}
	if len(old) != 1 {
		t.Fatalf("the upstream ClusterQueue CRD has no v1beta1 version")
	}
	if err := unstructured.SetNestedSlice(cq.Object, old, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(ctx, cq, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(crdGVR).Delete(ctx, cq.GetName(), metav1.DeleteOptions{}) })
	if err := kubeapitest.WaitForCRDs(ctx, cfg, cq); err != nil {
		t.Fatal(err)
	}

	c, _ := client(t)
	d := &engine.Desired{Stack: "old-kueue", Kinds: engine.ManagedKinds()}
	d.Objects = []*engine.Object{{Address: "tenant.risk", Object: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": "risk"}}}}}
	live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := live.ServedVersions[schema.GroupKind{Group: "kueue.x-k8s.io", Kind: "ClusterQueue"}]; !slices.Equal(got, []string{"v1beta1"}) {
		t.Fatalf("served versions of ClusterQueue: %v, want [v1beta1]", got)
	}
	if live.ServedVersions[schema.GroupKind{Group: "kueue.x-k8s.io", Kind: "LocalQueue"}] != nil {
		t.Errorf("LocalQueue, which is not served at all, has served versions %v", live.ServedVersions)
	}
	_, err = engine.Diff(d, live, engine.DiffOptions{})
	var mk *engine.MissingKindError
	want := "tenant.risk needs ClusterQueue (kueue.x-k8s.io/v1beta2), but this cluster serves ClusterQueue only at kueue.x-k8s.io/v1beta1: upgrade to Kueue v0.15 or later (gpuform writes kueue.x-k8s.io/v1beta2)"
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), want) {
		t.Errorf("diff: %v\nwant: %s", err, want)
	}
}
