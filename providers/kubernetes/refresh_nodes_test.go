package kubernetes_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// TestRefreshTrimsNodes checks, on the real API server, that a refresh
// keeps of a Node what gpuform reads (labels, every managedFields entry,
// the field sets of gpuform's field managers, the taints, the status's
// capacity and allocatable) and not the rest of what a kubelet reports
// (conditions, addresses, nodeInfo, images), and that the diff still finds
// a node whose pool label another stack's field manager owns.
func TestRefreshTrimsNodes(t *testing.T) {
	ctx := kubeapitest.Context(t)
	c, cs := client(t)
	cfg, err := srv.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	const name, product = "trim-0", "TRIM-TEST-GPU"
	if err := kubeapitest.CreateNodes(ctx, cfg, kubeapitest.GPUNode{
		Name:     name,
		Labels:   map[string]string{"nvidia.com/gpu.product": product},
		Capacity: map[string]string{"nvidia.com/gpu": "8", "cpu": "96"},
		Taints:   []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}},
		Kubelet:  true, // what a kubelet reports beside the capacity
	}); err != nil {
		t.Fatal(err)
	}
	// Another stack's pool holds the node.
	other := engine.NodeFieldManager("trim-other")
	if _, err := cs.CoreV1().Nodes().Apply(ctx, corev1ac.Node(name).WithLabels(map[string]string{engine.LabelPool: "theirs"}), metav1.ApplyOptions{FieldManager: other, Force: true}); err != nil {
		t.Fatal(err)
	}
	server, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(server.Status.Images) != 50 || len(server.Status.Conditions) == 0 || server.Status.NodeInfo.KubeletVersion == "" {
		t.Fatalf("the server's node has %d images, %d conditions, nodeInfo %+v: want a kubelet's status", len(server.Status.Images), len(server.Status.Conditions), server.Status.NodeInfo)
	}

	d := &engine.Desired{Stack: "trim", Pools: []*engine.NodePool{{
		Address: "pool.mine", Pool: "mine",
		Selector: map[string]string{"nvidia.com/gpu.product": product},
		Labels:   map[string]string{engine.LabelPool: "mine"},
	}}}
	live, err := c.Refresh(ctx, d, engine.RefreshOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(live.Nodes, func(u *unstructured.Unstructured) bool { return u.GetName() == name })
	if i < 0 {
		t.Fatalf("the refresh did not read node %s", name)
	}
	got := live.Nodes[i]
	status, _ := got.Object["status"].(map[string]any)
	if gpus, _, _ := unstructured.NestedString(status, "capacity", "nvidia.com/gpu"); gpus != "8" {
		t.Errorf("capacity nvidia.com/gpu = %q, want 8 (status %v)", gpus, status)
	}
	if gpus, _, _ := unstructured.NestedString(status, "allocatable", "nvidia.com/gpu"); gpus != "8" {
		t.Errorf("allocatable nvidia.com/gpu = %q, want 8", gpus)
	}
	for _, f := range []string{"conditions", "addresses", "nodeInfo", "images", "daemonEndpoints"} {
		if _, ok := status[f]; ok {
			t.Errorf("the refreshed node keeps status.%s", f)
		}
	}
	if taints, _, _ := unstructured.NestedSlice(got.Object, "spec", "taints"); len(taints) == 0 || len(taints) != len(server.Spec.Taints) {
		t.Errorf("taints %v, the server has %v", taints, server.Spec.Taints)
	}
	if got.GetLabels()[engine.LabelPool] != "theirs" || got.GetLabels()["nvidia.com/gpu.product"] != product {
		t.Errorf("labels %v", got.GetLabels())
	}
	entries := got.GetManagedFields()
	if len(entries) != len(server.ManagedFields) {
		t.Errorf("%d managedFields entries, the server has %d", len(entries), len(server.ManagedFields))
	}
	for _, e := range entries {
		if kept := e.FieldsV1 != nil; kept != (e.Manager == other) {
			t.Errorf("field manager %s (%s): fieldsV1 kept %v, want it kept for %s only", e.Manager, e.Subresource, kept, other)
		}
	}
	changes, err := engine.DiffNodes(d, live, engine.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(changes, func(c *engine.Change) bool { return c.Key.Name == name })
	if j < 0 || changes[j].Action != engine.ActionConflict {
		t.Fatalf("no conflict planned for node %s, whose pool label %s owns: %v", name, other, changes)
	}
}
