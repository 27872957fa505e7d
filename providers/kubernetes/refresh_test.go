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

// TestRefreshPages checks that refresh reads a kind in one LIST by default
// and every page of it with a page size set, with no GET of a single
// object, and keeps only gpuform's managed fields of the stack's objects.
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
	for _, tt := range []struct {
		pageSize int64
		lists    int
	}{{0, 1}, {2, (n + 1) / 2}} {
		t.Run(fmt.Sprintf("page size %d", tt.pageSize), func(t *testing.T) {
			refreshPages(t, stack, n, tt.pageSize, tt.lists)
		})
	}
}

// refreshPages refreshes the n namespaces of stack with page size
// pageSize and checks what it read and that it took lists LIST requests.
func refreshPages(t *testing.T, stack string, n int, pageSize int64, lists int) {
	ctx := kubeapitest.Context(t)
	var counter kubeapitest.Counter
	c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig, PageSize: pageSize, WrapTransport: counter.Wrap})
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
	if pages != lists {
		t.Errorf("%d LIST requests of namespaces, want %d:\n%s", pages, lists, strings.Join(counter.Requests(), "\n"))
	}
}
