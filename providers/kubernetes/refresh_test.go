package kubernetes_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/capacity"
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
		if strings.Contains(r, "/api/v1/namespaces") && !strings.Contains(r, "/"+engine.LockNamespace+"/configmaps") { // not the stack's record
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

// TestRefreshAfterPrefetch checks that Refresh uses the LISTs Prefetch
// sent for the same stack (reading the same objects, the cluster's
// RuntimeClasses included, sending no LIST twice) and ignores a prefetch
// of another stack.
func TestRefreshAfterPrefetch(t *testing.T) {
	ctx := kubeapitest.Context(t)
	_, cs := client(t)
	for _, name := range []string{"prefetch-a", "prefetch-b"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{engine.LabelStack: "prefetch"}}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "prefetch-sandbox"}, Handler: "runsc"}
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	restCfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeapitest.PublishDRASlices(ctx, restCfg, kubeapitest.DRANode{Node: "prefetch-gpu", Product: "NVIDIA H100 80GB HBM3", GPUs: 2, MemoryBytes: 80 << 30}); err != nil {
		t.Fatal(err)
	}
	// Kueue's configuration, where its standard install keeps it.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: capacity.KueueNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kueueCfg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: capacity.KueueConfigMap, Namespace: capacity.KueueNamespace},
		Data: map[string]string{capacity.KueueConfigKey: "resources:\n  deviceClassMappings:\n  - name: c.deviceclass.resource.k8s.io/devices\n    deviceClassNames: [c]\n"}}
	if _, err := cs.CoreV1().ConfigMaps(capacity.KueueNamespace).Create(ctx, kueueCfg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The Volcano scheduler's configuration, where its standard install
	// keeps it, with the capacity plugin's hierarchy on.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: capacity.VolcanoNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	volcanoCfg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: capacity.VolcanoConfigMap, Namespace: capacity.VolcanoNamespace},
		Data: map[string]string{capacity.VolcanoConfigKey: "actions: \"enqueue, allocate, backfill, reclaim\"\ntiers:\n- plugins:\n  - name: priority\n  - name: capacity\n    enableHierarchy: true\n"}}
	if _, err := cs.CoreV1().ConfigMaps(capacity.VolcanoNamespace).Create(ctx, volcanoCfg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	d := &engine.Desired{Stack: "prefetch", Kinds: engine.ManagedKinds()}
	for _, tt := range []struct {
		name, prefetch string
		// once: every LIST went out exactly once (a prefetch of another
		// stack is left to finish on its own, so its LISTs are not counted).
		once bool
	}{
		{"no prefetch", "", true},
		{"same stack", "prefetch", true},
		{"another stack", "other", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var counter kubeapitest.Counter
			c, err := kubernetes.New(kubernetes.Options{Kubeconfig: srv.Kubeconfig, WrapTransport: counter.Wrap})
			if err != nil {
				t.Fatal(err)
			}
			if tt.prefetch != "" {
				c.Prefetch(ctx, tt.prefetch)
			}
			live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for k := range live.Objects {
				names = append(names, k.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"prefetch-a", "prefetch-b"}) {
				t.Errorf("refresh read %v, want the stack's two namespaces", names)
			}
			if !live.RuntimeClasses["prefetch-sandbox"] {
				t.Errorf("refresh read RuntimeClasses %v, want prefetch-sandbox among them", live.RuntimeClasses)
			}
			if devs := live.DRA.Nodes["prefetch-gpu"]; !live.DRA.Served || capacity.GPUs(devs) != 2 {
				t.Errorf("refresh read DRA devices %+v (served %v), want prefetch-gpu's 2 GPUs", live.DRA.Nodes, live.DRA.Served)
			}
			if kc := live.DRA.Kueue; kc.Source != "kueue-system/kueue-manager-config" || !slices.Equal(kc.Mappings["c"], []string{"c.deviceclass.resource.k8s.io/devices"}) {
				t.Errorf("refresh read Kueue's configuration %+v, want kueue-system/kueue-manager-config mapping class c", kc)
			}
			if vc := live.DRA.Volcano; vc.Source != "volcano-system/volcano-scheduler-configmap" || !vc.Capacity || !vc.Hierarchy {
				t.Errorf("refresh read the Volcano scheduler's configuration %+v, want volcano-system/volcano-scheduler-configmap with the capacity plugin's hierarchy on", vc)
			}
			if !tt.once {
				return
			}
			lists := map[string]int{}
			for _, r := range counter.Requests() {
				if path, ok := strings.CutPrefix(r, "GET "); ok && path != "/api" && path != "/apis" {
					lists[path]++
				}
			}
			if lists["/api/v1/namespaces"] != 1 || lists["/api/v1/nodes"] != 1 || lists["/apis/node.k8s.io/v1/runtimeclasses"] != 1 || lists["/apis/resource.k8s.io/v1/resourceslices"] != 1 {
				t.Errorf("LISTs: %v, want each once", lists)
			}
			for path, n := range lists {
				// ConfigMaps: the stack's (by its label), Kueue's
				// configuration and the Volcano scheduler's (each by its
				// name).
				if want := map[string]int{"/api/v1/configmaps": 3}[path]; n != max(want, 1) {
					t.Errorf("%d LISTs of %s, want %d", n, path, max(want, 1))
				}
			}
		})
	}
}
