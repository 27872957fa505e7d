package kubeapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// CRDDir returns testdata/crds at the repository root.
func CRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "crds")
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ApplyCRDs applies the named files of testdata/crds (e.g. "kueue.yaml")
// and waits until every CRD is Established.
func ApplyCRDs(ctx context.Context, cfg *rest.Config, files ...string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		objs, err := ReadYAML(filepath.Join(CRDDir(), f))
		if err != nil {
			return err
		}
		for _, o := range objs {
			if _, err := dyn.Resource(crdGVR).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "kubeapitest", Force: true}); err != nil {
				return fmt.Errorf("apply CRD %s: %w", o.GetName(), err)
			}
			names = append(names, o.GetName())
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range names {
		for {
			u, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not established after 30s", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Wait until discovery serves every new kind, so that clients made
	// next do not see a half-published API (and re-discover).
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for _, n := range names {
		u, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return err
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
		for _, v := range versions {
			name, _ := v.(map[string]any)["name"].(string)
			for !served(dc, group+"/"+name, kind) {
				if time.Now().After(deadline) {
					return fmt.Errorf("discovery does not serve %s %s/%s after 30s", kind, group, name)
				}
				time.Sleep(100 * time.Millisecond)
			}
			// The first LISTs of a new CRD may be answered 503 Retry-After
			// while its storage starts; wait until one succeeds.
			gvr := schema.GroupVersionResource{Group: group, Version: name, Resource: plural}
			for {
				if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("%s is not listable after 30s", gvr)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	return nil
}

// served reports whether discovery lists kind in groupVersion, both in
// the per-group document and in the aggregated /apis list.
func served(dc *discovery.DiscoveryClient, groupVersion, kind string) bool {
	rl, err := dc.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return false
	}
	found := false
	for _, r := range rl.APIResources {
		found = found || r.Kind == kind
	}
	if !found {
		return false
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		return false
	}
	for _, l := range lists {
		if l.GroupVersion != groupVersion {
			continue
		}
		for _, r := range l.APIResources {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// ReadYAML decodes every document of a multi-document YAML file.
func ReadYAML(path string) ([]*unstructured.Unstructured, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(src), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// GPUNode describes a simulated GPU node: a Node object with GPU Feature
// Discovery labels and extended-resource capacity, without a kubelet.
type GPUNode struct {
	Name     string
	Labels   map[string]string
	Capacity map[string]string
}

// CreateNodes creates the nodes (or updates their labels) and sets their
// status capacity and allocatable through the status subresource, 16 nodes
// at a time (benchmarks create thousands).
func CreateNodes(ctx context.Context, cfg *rest.Config, nodes ...GPUNode) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, n := range nodes {
		g.Go(func() error { return createNode(gctx, cs, n) })
	}
	return g.Wait()
}

func createNode(ctx context.Context, cs kubernetes.Interface, n GPUNode) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("create node %s: %w", n.Name, err)
	}
	rl := corev1.ResourceList{}
	for k, v := range n.Capacity {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	// Retried on conflict: PlayKubelet may update the node meanwhile.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		created.Status.Capacity, created.Status.Allocatable = rl, rl
		_, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if fresh, gerr := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{}); gerr == nil {
				created = fresh
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set capacity of node %s: %w", n.Name, err)
	}
	return nil
}

// CreateNamespaces creates namespaces that may already exist.
func CreateNamespaces(ctx context.Context, cfg *rest.Config, names ...string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, n := range names {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", n, err)
		}
	}
	return nil
}

// Counter counts the HTTP requests that pass through it, by method and path.
type Counter struct {
	mu       sync.Mutex
	requests []string
}

// Wrap is a rest.Config WrapTransport function.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.requests = append(c.requests, r.Method+" "+r.URL.Path)
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// Ordered returns the requests seen so far, in the order they were sent.
func (c *Counter) Ordered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.requests...)
}

// Requests returns the requests seen so far, sorted.
func (c *Counter) Requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string(nil), c.requests...)
	sort.Strings(out)
	return out
}

// Mutating returns the requests that were not GET, HEAD or OPTIONS.
func (c *Counter) Mutating() []string {
	var out []string
	for _, r := range c.Requests() {
		switch {
		case len(r) > 4 && r[:4] == "GET ", len(r) > 5 && r[:5] == "HEAD ", len(r) > 8 && r[:8] == "OPTIONS ":
		default:
			out = append(out, r)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// CreateClusterPolicy creates a GPU Operator ClusterPolicy (the CRD from
// testdata/crds/gpu-operator.yaml must be applied).
func CreateClusterPolicy(ctx context.Context, cfg *rest.Config, name string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"migManager":   map[string]any{"enabled": true, "config": map[string]any{"name": "default-mig-parted-config"}},
			"devicePlugin": map[string]any{"enabled": true},
		},
	}}
	gvr := schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}
	_, err = dyn.Resource(gvr).Create(ctx, cp, metav1.CreateOptions{FieldManager: "gpu-operator"})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// MigFailLabel on a node makes PlayMigManager report failure for it.
const MigFailLabel = "test.gpuform.dev/mig-fail"

// PlayMigManager stands in for the GPU Operator's mig-manager until ctx
// ends: every 200ms it finds nodes whose nvidia.com/mig.config.state is
// "pending" and sets it to "success" (or "failed" on nodes labelled
// MigFailLabel), as field manager nvidia-mig-manager.
func PlayMigManager(ctx context.Context, cfg *rest.Config) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range nodes.Items {
				n := &nodes.Items[i]
				if n.Labels["nvidia.com/mig.config.state"] != "pending" {
					continue
				}
				n.Labels["nvidia.com/mig.config.state"] = "success"
				if n.Labels[MigFailLabel] == "true" {
					n.Labels["nvidia.com/mig.config.state"] = "failed"
				}
				_, _ = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "nvidia-mig-manager"})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
