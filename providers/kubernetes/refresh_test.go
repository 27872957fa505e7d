package kubernetes_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
	"github.com/gpuform/gpuform/providers/kubernetes"
)

// TestRefreshPages checks that refresh reads every page of a kind (the
// next page requested while the previous one is decoded), with one LIST
// per page and no GET of a single object, and keeps only gpuform's
// managed fields of the stack's objects.
func TestRefreshPages(t *testing.T) {
	ctx := kubeapitest.Context(t)
	_, cs := client(t)
	const stack, n = "pages", 7
	for i := range n {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("pages-%d", i),
			Labels: map[string]string{engine.LabelStack: stack},
		}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: "someone-else"}); err != nil {
			t.Fatal(err)
		}
	}
	var counter kubeapitest.Counter
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig, PageSize: 2, WrapTransport: counter.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	d := &engine.Desired{Stack: stack, Kinds: []engine.Kind{engine.KindNamespace}}
	live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for k, u := range live.Objects {
		if k.Kind != "Namespace" || !strings.HasPrefix(k.Name, "pages-") {
			t.Errorf("unexpected object %s", k)
		}
		if mf := u.GetManagedFields(); len(mf) != 0 {
			t.Errorf("%s keeps the managed fields of %s", k, mf[0].Manager)
		}
		if _, ok := u.Object["status"]; ok {
			t.Errorf("%s keeps its status", k)
		}
		got++
	}
	if got != n {
		t.Errorf("refresh read %d namespaces, want %d", got, n)
	}
	pages := 0
	for _, r := range counter.Requests() {
		if strings.Contains(r, "/api/v1/namespaces") {
			if !strings.HasPrefix(r, "GET") || strings.Contains(r, "/api/v1/namespaces/") {
				t.Errorf("request %s is not a LIST of namespaces", r)
			}
			pages++
		}
	}
	if pages != (n+1)/2 {
		t.Errorf("%d LIST requests of namespaces, want %d pages of 2:\n%s", pages, (n+1)/2, strings.Join(counter.Requests(), "\n"))
	}
}
