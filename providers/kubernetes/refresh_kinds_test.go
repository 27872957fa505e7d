package kubernetes_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/kinds"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestRefreshReadsTheRegistry checks that kinds added to a registry (in
// this test only) reach refresh through the desired state: one the API
// server serves (Secrets, which gpuform does not manage) is listed by the
// stack label, and one it does not serve is reported missing, which the
// diff explains with the kind's install hint.
func TestRefreshReadsTheRegistry(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, cs := client(t)
	managed := kinds.Access{Plan: kinds.VerbsRead, Drift: kinds.VerbsRead, Apply: kinds.VerbList | kinds.VerbCreate | kinds.VerbPatch | kinds.VerbDelete}
	widget := kinds.Kind{GroupVersionKind: schema.GroupVersionKind{Group: "example.gpuform.dev", Version: "v1alpha1", Kind: "Widget"}, Namespaced: true, Optional: true}
	reg, err := kinds.Builtin().With(
		kinds.Entry{Kind: kinds.Kind{GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Namespaced: true}, Resource: "secrets", Use: kinds.Managed, Rank: 55, Access: managed},
		kinds.Entry{Kind: widget, Resource: "widgets", Use: kinds.Managed, Rank: 56, InstallHint: "install the widget operator", Access: managed},
	)
	if err != nil {
		t.Fatal(err)
	}
	const stack = "registry"
	for _, name := range []string{"ours", "theirs"} {
		labels := map[string]string{engine.LabelStack: stack}
		if name == "theirs" {
			labels = nil
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry-" + name, Namespace: "default", Labels: labels}}
		if _, err := cs.CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	d := &engine.Desired{Stack: stack, Registry: reg, Kinds: reg.Managed()}
	live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for k := range live.Objects {
		if k.Kind == "Secret" {
			secrets = append(secrets, k.Name)
		}
	}
	if !slices.Equal(secrets, []string{"registry-ours"}) {
		t.Errorf("refresh read the Secrets %v, want the stack's one", secrets)
	}
	if !slices.Contains(live.MissingKinds, widget) {
		t.Fatalf("missing kinds %v, want the widget among them", live.MissingKinds)
	}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.gpuform.dev/v1alpha1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}}}
	d.Objects = []*engine.Object{{Address: "widget.w", Object: w}}
	_, err = engine.Diff(d, live, engine.DiffOptions{})
	var mk *engine.MissingKindError
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "widget.w needs Widget") || !strings.Contains(err.Error(), "install the widget operator") {
		t.Errorf("diff: %v, want the widget's install hint", err)
	}
}
