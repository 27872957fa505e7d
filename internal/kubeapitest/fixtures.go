package kubeapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
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
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/gpuform/gpuform/engine/kinds"
)

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
	// Taints are set when the node is created, as a node provisioner
	// registers them.
	Taints []corev1.Taint
	// Kubelet also writes, with the capacity and as field manager
	// "kubelet", the rest of what a kubelet reports (kubeletStatus), as on
	// a real cluster.
	Kubelet bool
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
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}, Spec: corev1.NodeSpec{Taints: n.Taints}}
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
	var opts metav1.UpdateOptions
	if n.Kubelet {
		opts.FieldManager = "kubelet"
	}
	// Retried on conflict: PlayKubelet may update the node meanwhile.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		created.Status.Capacity, created.Status.Allocatable = rl, rl
		if n.Kubelet {
			kubeletStatus(&created.Status, n.Name)
		}
		_, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, opts)
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

// kubeletStatus sets in st what a kubelet reports of node name beside its
// capacity: four conditions, three addresses, the daemon endpoint, the
// nodeInfo and 50 container images (a kubelet's default
// --node-status-max-images), about 16 KB of JSON, with addresses and IDs
// of the node's own.
func kubeletStatus(st *corev1.NodeStatus, name string) {
	i := int(crc32.ChecksumIEEE([]byte(name)))
	now := metav1.Now()
	st.Conditions = nil
	for _, c := range []struct{ kind, status, reason, message string }{
		{"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
	} {
		st.Conditions = append(st.Conditions, corev1.NodeCondition{Type: corev1.NodeConditionType(c.kind), Status: corev1.ConditionStatus(c.status),
			Reason: c.reason, Message: c.message, LastHeartbeatTime: now, LastTransitionTime: now})
	}
	st.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/256%256, i%256)},
		{Type: corev1.NodeInternalDNS, Address: fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/256%256, i%256)},
		{Type: corev1.NodeHostName, Address: name},
	}
	st.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}}
	st.NodeInfo = corev1.NodeSystemInfo{
		MachineID: fmt.Sprintf("ec2%029d", i), SystemUUID: fmt.Sprintf("ec2%029d", i), BootID: fmt.Sprintf("5b1f0a1e-0000-4000-8000-%012d", i),
		KernelVersion: "6.8.0-1019-aws", OSImage: "Ubuntu 24.04.1 LTS", ContainerRuntimeVersion: "containerd://2.0.4",
		KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
	}
	st.Images = nil
	for j := range 50 {
		st.Images = append(st.Images, corev1.ContainerImage{Names: []string{
			fmt.Sprintf("registry.example.com/team-%02d/image-%02d@sha256:%064d", j%7, j, j),
			fmt.Sprintf("registry.example.com/team-%02d/image-%02d:v1.%d.0", j%7, j, j),
		}, SizeBytes: int64(100000000 + j*7919)})
	}
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

// CreateClusterPolicy creates a GPU Operator ClusterPolicy (the "gpu-operator"
// CRDs must be applied) as the operator's Helm chart renders it with its
// default values, in brief: every component the CRD requires (daemonsets,
// dcgm, dcgmExporter, devicePlugin, driver, gfd, nodeStatusExporter,
// operator, toolkit), MIG strategy "single" and mig-manager on its default
// config. It is created with strict field validation.
func CreateClusterPolicy(ctx context.Context, cfg *rest.Config, name string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	e, _ := kinds.Builtin().Lookup(schema.GroupKind{Group: kinds.GroupNVIDIA, Kind: "ClusterPolicy"})
	cp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": e.GroupVersion().String(), "kind": e.Kind.Kind,
		"metadata": map[string]any{"name": name},
		"spec":     ClusterPolicySpec(),
	}}
	_, err = dyn.Resource(e.GroupVersionResource()).Create(ctx, cp, metav1.CreateOptions{FieldManager: "gpu-operator", FieldValidation: metav1.FieldValidationStrict})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ClusterPolicySpec is the spec CreateClusterPolicy writes: what the GPU
// Operator's chart renders from its default values, less image names.
func ClusterPolicySpec() map[string]any {
	on := func(extra ...any) map[string]any {
		m := map[string]any{"enabled": true}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	return map[string]any{
		"operator":           map[string]any{"defaultRuntime": "containerd", "runtimeClass": "nvidia"},
		"daemonsets":         map[string]any{"priorityClassName": "system-node-critical", "updateStrategy": "RollingUpdate"},
		"driver":             on(),
		"toolkit":            on(),
		"devicePlugin":       on(),
		"dcgm":               on(),
		"dcgmExporter":       on(),
		"gfd":                on(),
		"nodeStatusExporter": map[string]any{"enabled": false},
		"mig":                map[string]any{"strategy": "single"},
		"migManager":         on("config", map[string]any{"name": "default-mig-parted-config", "default": "all-disabled"}),
	}
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
