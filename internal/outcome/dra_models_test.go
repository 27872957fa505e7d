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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// draModelsConfig: models on two DRA pools, A100s in MIG (two 1g.5gb per
// GPU) and whole H100s. Tenant vision has one 1g.5gb slice and a model
// on it that may scale to two replicas; tenant text one H100 and a model
// on it. Pool names are the stack's own: a pool's node label
// (gpuform.dev/pool) is not per stack, and the other DRA test's stack has
// pools a100 and h100.
const draModelsConfig = `
gpuform {
  stack       = "dramodels"
  scheduler   = "none"
  mig_backend = "agent"
}

mig_layout "dramodels-halves" {
  gpu    = "A100-40GB"
  slices = { "1g.5gb" = 2 }
}

pool "dm-a100" {
  gpu           = "A100-40GB"
  mode          = "dra"
  mig_layout    = mig_layout.dramodels-halves
  node_selector = { "outcome.gpuform.dev/group" = "dramodels-a100" }
}

pool "dm-h100" {
  gpu           = "H100-80GB"
  mode          = "dra"
  node_selector = { "outcome.gpuform.dev/group" = "dramodels-h100" }
}

tenant "vision" {
  namespace = "dramodels-vision"
  admins    = ["user:dramodels-vision-admin"]
  protect   = false
  quota "dm-a100" {
    slices = { "1g.5gb" = 1 }
  }
}

tenant "text" {
  namespace = "dramodels-text"
  admins    = ["user:dramodels-text-admin"]
  protect   = false
  quota "dm-h100" {
    gpus = 1
  }
}

model "vision" {
  tenant      = tenant.vision
  pool        = pool.dm-a100
  slice       = "1g.5gb"
  format      = "onnx"
  storage_uri = "s3://models/vision"
  replicas    = { min = 1, max = 2 }
}

model "chat" {
  tenant      = tenant.text
  pool        = pool.dm-h100
  gpus        = 1
  format      = "huggingface"
  storage_uri = "s3://models/chat"
  replicas    = { min = 1, max = 1 }
}
`

// The dramodels stack's DeviceClasses.
const (
	dmClassA100 = "gpuform-dramodels-dm-a100-1g-5gb"
	dmClassH100 = "gpuform-dramodels-dm-h100-gpu"
)

// TestDRAModelPodsGetTheirPoolsDevices: a model on a DRA pool has a
// ResourceClaimTemplate of its pool's DeviceClass, which gpuform applied
// with strict field validation; its pod (as KServe makes it from the
// InferenceService, created by the tenant's admin acting as themself)
// gets, through the claim Kubernetes' resource claim controller makes from
// the template, a device of its pool only, allocated by kube-scheduler on
// the pool's node. For a replica beyond the tenant's device-class quota,
// and a pod of a template of a pool where the tenant has no quota, the API
// server refuses the controller's claim: the pod gets no device. A change
// of the model's GPUs is applied as a new template (a template's spec is
// immutable). The harness runs the resource claim controller (kubeapi
// --workloads).
func TestDRAModelPodsGetTheirPoolsDevices(t *testing.T) {
	ctx := kubeapitest.Context(t)
	createNodes(t,
		gpuNode("dramodels-a100-0", "NVIDIA-A100-SXM4-40GB", map[string]string{"outcome.gpuform.dev/group": "dramodels-a100", "nvidia.com/mig.capable": "true"}, nil),
		gpuNode("dramodels-h100-0", "NVIDIA-H100-80GB-HBM3", map[string]string{"outcome.gpuform.dev/group": "dramodels-h100", "nvidia.com/gpu.count": "2"}, nil),
	)
	if err := kubeapitest.PublishDRASlices(ctx, restCfg,
		kubeapitest.DRANode{Node: "dramodels-a100-0", Product: "NVIDIA A100-SXM4-40GB", GPUs: 1, MIG: []string{"1g.5gb", "1g.5gb"}},
		kubeapitest.DRANode{Node: "dramodels-h100-0", Product: "NVIDIA H100 80GB HBM3", GPUs: 2, MemoryBytes: 80 << 30},
	); err != nil {
		t.Fatal(err)
	}
	apply(t, draModelsConfig)
	vision, text := asTenant(t, "dramodels-vision-admin"), asTenant(t, "dramodels-text-admin")
	waitQuota(t, "dramodels-vision", dmClassA100)
	waitQuota(t, "dramodels-text", dmClassH100)

	for _, tc := range []struct {
		c                            *kubernetes.Clientset
		ns, model, tmpl, class, node string
		profile, product, devTy      string
	}{
		{vision, "dramodels-vision", "vision", "vision-dm-a100-1g-5gb-1", dmClassA100, "dramodels-a100-0", "1g.5gb", "NVIDIA A100-SXM4-40GB", "mig"},
		{text, "dramodels-text", "chat", "chat-dm-h100-gpu-1", dmClassH100, "dramodels-h100-0", "", "NVIDIA H100 80GB HBM3", "gpu"},
	} {
		checkTemplate(ctx, t, tc.ns, tc.tmpl, tc.class, 1)
		pod := draModelPod(t, tc.ns, tc.model, 0)
		if _, err := tc.c.CoreV1().Pods(tc.ns).Create(ctx, pod, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("%s: the model's pod, created by the tenant's admin: %v", tc.ns, err)
		}
		eventually(t, tc.ns+"'s model pod bound to "+tc.node+" with a device of its pool", func() (bool, string) {
			p, err := cs.CoreV1().Pods(tc.ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
				return false, fmt.Sprintf("pod claims %v", p.Status.ResourceClaimStatuses)
			}
			claim, err := cs.ResourceV1().ResourceClaims(tc.ns).Get(ctx, *p.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
				return false, fmt.Sprintf("pod on %q, claim %s not allocated", p.Spec.NodeName, claim.Name)
			}
			r := claim.Status.Allocation.Devices.Results[0]
			dev := publishedDevice(ctx, t, r.Pool, r.Device)
			got := fmt.Sprintf("pod on %q, device %s/%s %s %s %s", p.Spec.NodeName, r.Pool, r.Device, attr(dev, "type"), attr(dev, "productName"), attr(dev, "profile"))
			return p.Spec.NodeName == tc.node && r.Pool == tc.node && r.Driver == kubeapitest.DRADriver &&
				attr(dev, "type") == tc.devTy && attr(dev, "productName") == tc.product && attr(dev, "profile") == tc.profile, got
		})
	}

	// Beyond the quota: a second replica of each model (the pool has a
	// device free for it), and a claim text's admin makes of the A100s'
	// class, which the stack's device-classes policy lets through (the
	// class is the stack's) and text's quota (0 there) refuses.
	own, err := text.ResourceV1().ResourceClaimTemplates("dramodels-text").Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "slice", Namespace: "dramodels-text"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: dmClassA100, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}}},
	}, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("text's admin: a template of the stack's A100 class: %v", err)
	}
	for _, tc := range []struct {
		name    string
		c       *kubernetes.Clientset
		ns      string
		pod     func() *corev1.Pod
		refusal string
	}{
		{"vision's second replica, beyond its one slice", vision, "dramodels-vision", func() *corev1.Pod { return draModelPod(t, "dramodels-vision", "vision", 1) }, "exceeded quota"},
		{"chat's second replica, beyond text's one H100", text, "dramodels-text", func() *corev1.Pod { return draModelPod(t, "dramodels-text", "chat", 1) }, "exceeded quota"},
		{"a slice, where text has no quota", text, "dramodels-text", func() *corev1.Pod {
			p := draModelPod(t, "dramodels-text", "chat", 2)
			p.Spec.ResourceClaims[0].ResourceClaimTemplateName = &own.Name
			return p
		}, "exceeded quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod()
			if _, err := tc.c.CoreV1().Pods(tc.ns).Create(ctx, pod, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
				t.Fatalf("the pod: %v", err)
			}
			eventually(t, "the resource claim controller refused a claim for "+pod.Name, func() (bool, string) {
				evs, err := cs.CoreV1().Events(tc.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name})
				if err != nil {
					return false, err.Error()
				}
				var seen []string
				for _, e := range evs.Items {
					if e.Reason == "FailedResourceClaimCreation" && strings.Contains(e.Message, "forbidden: "+tc.refusal) {
						return true, ""
					}
					seen = append(seen, e.Reason+": "+e.Message)
				}
				return false, strings.Join(seen, "; ")
			})
			p, err := cs.CoreV1().Pods(tc.ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Status.ResourceClaimStatuses) > 0 || p.Spec.NodeName != "" {
				t.Fatalf("%s: pod %s has claims %v on node %q, want none and unbound", tc.ns, pod.Name, p.Status.ResourceClaimStatuses, p.Spec.NodeName)
			}
		})
	}

	// Two H100s for chat (and for text): the API server refuses any change
	// of a template's spec, so apply makes a new template, points the
	// InferenceService at it and prunes the old one.
	apply(t, strings.NewReplacer("gpus = 1", "gpus = 2", "gpus        = 1", "gpus        = 2").Replace(draModelsConfig))
	checkTemplate(ctx, t, "dramodels-text", "chat-dm-h100-gpu-2", dmClassH100, 2)
	if pod := draModelPod(t, "dramodels-text", "chat", 3); *pod.Spec.ResourceClaims[0].ResourceClaimTemplateName != "chat-dm-h100-gpu-2" {
		t.Errorf("chat's predictor claims from %s, want chat-dm-h100-gpu-2", *pod.Spec.ResourceClaims[0].ResourceClaimTemplateName)
	}
	if _, err := cs.ResourceV1().ResourceClaimTemplates("dramodels-text").Get(ctx, "chat-dm-h100-gpu-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the template of one H100 after the change: %v, want it pruned", err)
	}
}

// checkTemplate fails the test unless ResourceClaimTemplate ns/name asks
// for count devices of class.
func checkTemplate(ctx context.Context, t *testing.T, ns, name, class string, count int64) {
	t.Helper()
	tmpl, err := cs.ResourceV1().ResourceClaimTemplates(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: the model's ResourceClaimTemplate: %v", ns, err)
	}
	if reqs := tmpl.Spec.Spec.Devices.Requests; len(reqs) != 1 || reqs[0].Exactly == nil || reqs[0].Exactly.DeviceClassName != class || reqs[0].Exactly.Count != count {
		t.Fatalf("%s: template %s asks for %+v, want one request of %d of %s", ns, name, reqs, count, class)
	}
}

// draModelPod stands in for KServe's controller making replica i of the
// predictor of model (kservePod), with the pod-level resourceClaims of
// the predictor and the model container's resources.claims.
func draModelPod(t *testing.T, ns, model string, i int) *corev1.Pod {
	t.Helper()
	pod := kservePod(t, ns, model)
	pod.Name = fmt.Sprintf("%s-predictor-%d", model, i)
	pred, _, _ := unstructured.NestedMap(get(t, isvcGVR, ns, model).Object, "spec", "predictor")
	claims, _, _ := unstructured.NestedSlice(pred, "resourceClaims")
	for _, c := range claims {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		tmpl, _ := m["resourceClaimTemplateName"].(string)
		pod.Spec.ResourceClaims = append(pod.Spec.ResourceClaims, corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: &tmpl})
	}
	uses, _, _ := unstructured.NestedSlice(pred, "model", "resources", "claims")
	for _, c := range uses {
		name, _ := c.(map[string]any)["name"].(string)
		pod.Spec.Containers[0].Resources.Claims = append(pod.Spec.Containers[0].Resources.Claims, corev1.ResourceClaim{Name: name})
	}
	if len(pod.Spec.ResourceClaims) != 1 || len(pod.Spec.Containers[0].Resources.Claims) != 1 {
		t.Fatalf("InferenceService %s/%s: predictor claims %v, container claims %v; want one each", ns, model, claims, uses)
	}
	if gpus := pod.Spec.Containers[0].Resources.Limits.Name("nvidia.com/gpu", "DecimalSI"); !gpus.IsZero() {
		t.Fatalf("InferenceService %s/%s asks for nvidia.com/gpu too", ns, model)
	}
	return pod
}
