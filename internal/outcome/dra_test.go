package outcome

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// draConfig: two DRA pools, A100s in MIG (two 1g.5gb per GPU) and whole
// H100s; tenant vision has one 1g.5gb slice on the A100s and nothing on
// the H100s, tenant text two H100s and nothing on the A100s; text's
// namespace carries the label that lets the API server admit adminAccess
// claims. The agent partitions the A100s: the GPU Operator's mig-parted
// ConfigMap is one per cluster, which the other tests' stacks use.
const draConfig = `
gpuform {
  stack       = "dra"
  scheduler   = "none"
  mig_backend = "agent"
}

mig_layout "halves" {
  gpu    = "A100-40GB"
  slices = { "1g.5gb" = 2 }
}

pool "a100" {
  gpu           = "A100-40GB"
  mode          = "dra"
  mig_layout    = mig_layout.halves
  node_selector = { "outcome.gpuform.dev/group" = "dra-a100" }
}

pool "h100" {
  gpu           = "H100-80GB"
  mode          = "dra"
  node_selector = { "outcome.gpuform.dev/group" = "dra-h100" }
}

tenant "vision" {
  namespace = "dra-vision"
  admins    = ["user:vision-admin"]
  protect   = false
  quota "a100" {
    slices = { "1g.5gb" = 1 }
  }
}

tenant "text" {
  namespace = "dra-text"
  admins    = ["user:text-admin"]
  protect   = false
  labels    = { "resource.kubernetes.io/admin-access" = "true" }
  quota "h100" {
    gpus = 2
  }
}
`

// The stack's DeviceClasses.
const (
	draClassA100 = "gpuform-dra-a100-1g-5gb"
	draClassH100 = "gpuform-dra-h100-gpu"
)

// TestDRATenantsGetTheirPoolsDevices: on nodes whose GPUs NVIDIA's DRA
// driver publishes (an A100 in MIG, an H100 whole), each tenant's admin,
// acting as themself, gets through a ResourceClaim of its pool's
// DeviceClass a device of that pool, allocated by kube-scheduler; a claim
// beyond the tenant's device-class quota, one on a pool where it has no
// quota and one of the driver's own DeviceClass are refused by the API
// server.
func TestDRATenantsGetTheirPoolsDevices(t *testing.T) {
	ctx := kubeapitest.Context(t)
	createNodes(t,
		gpuNode("dra-a100-0", "NVIDIA-A100-SXM4-40GB", map[string]string{"outcome.gpuform.dev/group": "dra-a100", "nvidia.com/mig.capable": "true"}, nil),
		gpuNode("dra-h100-0", "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "dra-h100", "nvidia.com/gpu.count": "2"}, nil),
	)
	publishSlices(t,
		kubeapitest.DRANode{Node: "dra-a100-0", Product: "NVIDIA A100-SXM4-40GB", GPUs: 1, MIG: []string{"1g.5gb", "1g.5gb"}},
		kubeapitest.DRANode{Node: "dra-h100-0", Product: "NVIDIA H100 80GB HBM3", GPUs: 2, MemoryBytes: 80 << 30},
	)
	apply(t, draConfig)
	vision, text := asTenant(t, "vision-admin"), asTenant(t, "text-admin")
	waitQuota(t, "dra-vision", draClassA100)
	waitQuota(t, "dra-text", draClassH100)

	// Each tenant gets a device of its own pool.
	for _, tc := range []struct {
		c                *kubernetes.Clientset
		ns, class, node  string
		profile, product string
	}{
		{vision, "dra-vision", draClassA100, "dra-a100-0", "1g.5gb", "NVIDIA A100-SXM4-40GB"},
		{text, "dra-text", draClassH100, "dra-h100-0", "", "NVIDIA H100 80GB HBM3"},
	} {
		if _, err := createClaim(ctx, tc.c, tc.ns, "first", tc.class, false); err != nil {
			t.Fatalf("%s: claim of %s: %v", tc.ns, tc.class, err)
		}
		pod := claimPod(tc.ns, "first", "first")
		if _, err := tc.c.CoreV1().Pods(tc.ns).Create(ctx, pod, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("%s: pod with its claim: %v", tc.ns, err)
		}
		eventually(t, tc.ns+"'s pod bound to "+tc.node+" with a device of its pool", func() (bool, string) {
			p, err := cs.CoreV1().Pods(tc.ns).Get(ctx, "first", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			claim, err := cs.ResourceV1().ResourceClaims(tc.ns).Get(ctx, "first", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
				return false, fmt.Sprintf("pod on %q, claim not allocated", p.Spec.NodeName)
			}
			r := claim.Status.Allocation.Devices.Results[0]
			dev := publishedDevice(ctx, t, r.Pool, r.Device)
			got := fmt.Sprintf("pod on %q, device %s/%s %s %s %s", p.Spec.NodeName, r.Pool, r.Device,
				attr(dev, "type"), attr(dev, "productName"), attr(dev, "profile"))
			want := tc.profile == "" && attr(dev, "type") == "gpu" || tc.profile != "" && attr(dev, "type") == "mig" && attr(dev, "profile") == tc.profile
			return p.Spec.NodeName == tc.node && r.Pool == tc.node && r.Driver == kubeapitest.DRADriver && attr(dev, "productName") == tc.product && want, got
		})
	}

	// What the API server refuses each tenant (and admits, within quota).
	for i, tc := range []struct {
		name      string
		c         *kubernetes.Clientset
		ns, class string
		admin     bool
		refusal   string
	}{
		{"a second slice, beyond vision's quota", vision, "dra-vision", draClassA100, false, "exceeded quota"},
		{"an H100, where vision has no quota", vision, "dra-vision", draClassH100, false, "exceeded quota"},
		{"a slice, where text has no quota", text, "dra-text", draClassA100, false, "exceeded quota"},
		{"the driver's own class", vision, "dra-vision", "gpu.nvidia.com", false, "may name only the DeviceClasses"},
		{"the driver's MIG class", text, "dra-text", "mig.nvidia.com", false, "may name only the DeviceClasses"},
		// text has one H100 of its quota left: only the policy refuses
		// admin access (which reaches devices other claims hold) to it.
		{"admin access to an H100, within text's quota", text, "dra-text", draClassH100, true, "without adminAccess"},
		{"a second H100, within text's quota", text, "dra-text", draClassH100, false, ""},
		{"a third H100, beyond text's quota", text, "dra-text", draClassH100, false, "exceeded quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("more-%d", i)
			_, err := createClaim(ctx, tc.c, tc.ns, name, tc.class, tc.admin)
			if tc.refusal == "" {
				if err != nil {
					t.Fatalf("%s: a claim of %s within its quota: %v", tc.ns, tc.class, err)
				}
				return
			}
			if err == nil {
				_ = cs.ResourceV1().ResourceClaims(tc.ns).Delete(ctx, name, metav1.DeleteOptions{})
				t.Fatalf("%s: a claim of %s was admitted", tc.ns, tc.class)
			}
			if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.refusal) {
				t.Fatalf("%s: claim of %s refused with %v, want %q", tc.ns, tc.class, err, tc.refusal)
			}
		})
	}
}

// publishSlices publishes the ResourceSlices of nodes as NVIDIA's DRA
// driver does, and deletes them when the test ends: a DeviceClass selects
// devices by product and profile, not by node, so the devices one test
// publishes would otherwise be devices of the next test's stack too.
func publishSlices(t *testing.T, nodes ...kubeapitest.DRANode) {
	t.Helper()
	if err := kubeapitest.PublishDRASlices(context.Background(), restCfg, nodes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			if err := cs.ResourceV1().ResourceSlices().Delete(context.Background(), kubeapitest.DRASliceName(n.Node), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete the ResourceSlice of node %s: %v", n.Node, err)
			}
		}
	})
}

// waitQuota waits until the quota controller has counted the tenant's
// ResourceQuota, which names class, so that admission enforces it.
func waitQuota(t *testing.T, ns, class string) {
	t.Helper()
	key := corev1.ResourceName(class + ".deviceclass.resource.k8s.io/devices")
	eventually(t, "ResourceQuota of "+ns+" counts "+class, func() (bool, string) {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(context.Background(), "gpuform", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := q.Status.Hard[key]
		return ok, fmt.Sprint(q.Status.Hard)
	})
}

// createClaim creates, as the client's user and with strict field
// validation, a ResourceClaim for one device of class, with adminAccess
// when admin.
func createClaim(ctx context.Context, c *kubernetes.Clientset, ns, name, class string, admin bool) (*resourcev1.ResourceClaim, error) {
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name:    "gpu",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
	if admin {
		claim.Spec.Devices.Requests[0].Exactly.AdminAccess = &admin
	}
	return c.ResourceV1().ResourceClaims(ns).Create(ctx, claim, metav1.CreateOptions{FieldValidation: "Strict"})
}

// claimPod is a pod whose container uses ResourceClaim claim.
func claimPod(ns, name, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}},
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.invalid/cuda:latest",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}},
			}},
		},
	}
}

// publishedDevice is device name of the ResourceSlice of pool (a node).
func publishedDevice(ctx context.Context, t *testing.T, pool, name string) *resourcev1.Device {
	t.Helper()
	slices, err := cs.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range slices.Items {
		s := &slices.Items[i]
		if s.Spec.Pool.Name != pool {
			continue
		}
		for j := range s.Spec.Devices {
			if s.Spec.Devices[j].Name == name {
				return &s.Spec.Devices[j]
			}
		}
	}
	t.Fatalf("no device %s in pool %s", name, pool)
	return nil
}

// attr is a string attribute of dev, "" when it has none.
func attr(dev *resourcev1.Device, name string) string {
	if a, ok := dev.Attributes[resourcev1.QualifiedName(name)]; ok && a.StringValue != nil {
		return *a.StringValue
	}
	return ""
}

// pluginConfig: a stack whose one pool is the device plugin's (whole
// H100s), on a cluster that also runs NVIDIA's DRA driver on that pool's
// node (a migration, or a driver installed beside the plugin).
const pluginConfig = `
gpuform {
  stack     = "plugin"
  scheduler = "none"
}

pool "h100" {
  gpu           = "H100-80GB"
  node_selector = { "outcome.gpuform.dev/group" = "plugin-h100" }
}

tenant "chat" {
  namespace = "plugin-chat"
  admins    = ["user:chat-admin"]
  protect   = false
}
`

// TestDRADriverClassesClosedToEveryStack: a tenant of a stack without DRA
// pools, whose quota gives it no GPU, asks NVIDIA's DRA driver for one
// through the driver's own DeviceClass; no ResourceQuota of the stack
// names that class, so only the stack's device-classes policy stands in
// the way, and it is in every stack that has tenants: refused.
func TestDRADriverClassesClosedToEveryStack(t *testing.T) {
	ctx := kubeapitest.Context(t)
	createNodes(t, gpuNode("plugin-h100-0", "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "plugin-h100", "nvidia.com/gpu.count": "2"}, map[string]string{"nvidia.com/gpu": "2"}))
	publishSlices(t,
		kubeapitest.DRANode{Node: "plugin-h100-0", Product: "NVIDIA H100 80GB HBM3", GPUs: 2, MemoryBytes: 80 << 30},
	)
	// The DeviceClass NVIDIA's driver installs for whole GPUs.
	driverClass := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
		}}}},
	}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, driverClass, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	apply(t, pluginConfig)
	chat := asTenant(t, "chat-admin")
	_, err := createClaim(ctx, chat, "plugin-chat", "escape", "gpu.nvidia.com", false)
	if err == nil {
		pod := claimPod("plugin-chat", "escape", "escape")
		_, perr := chat.CoreV1().Pods("plugin-chat").Create(ctx, pod, metav1.CreateOptions{})
		t.Fatalf("a claim of the driver's gpu.nvidia.com by a tenant without GPU quota was admitted (its pod: %v)", perr)
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "may name only the DeviceClasses") {
		t.Fatalf("claim refused with %v, want the device-classes policy's refusal", err)
	}
}
