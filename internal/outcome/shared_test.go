package outcome

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sharedConfig: tenant shared-apps has 1 whole H200 on pool shared-whole
// and 4 time-slicing replicas of the L4s of pool shared-ts, which the
// device plugin advertises as nvidia.com/gpu.shared (rename_by_default);
// its model runs on a replica.
const sharedConfig = `
gpuform {
  stack = "shared-outcome"
}

pool "shared-whole" {
  gpu           = "NVIDIA-H200"
  node_selector = { "outcome.gpuform.dev/group" = "shared-whole" }
}

pool "shared-ts" {
  gpu           = "NVIDIA-L4"
  node_selector = { "outcome.gpuform.dev/group" = "shared-ts" }
  time_slicing {
    replicas          = 4
    rename_by_default = true
  }
}

tenant "shared-apps" {
  quota "shared-whole" {
    gpus = 1
  }
  quota "shared-ts" {
    gpus = 4
  }
  protect = false
}

model "embed" {
  tenant      = tenant.shared-apps
  pool        = pool.shared-ts
  format      = "onnx"
  storage_uri = "s3://models/embed"
  env         = { OMP_NUM_THREADS = "2" }
}
`

// TestSharedReplicasKeptApartFromWholeGPUs: with the time-sliced pool's
// replicas renamed, the tenant's whole-GPU quota stays 1 (not 1 + 4 in one
// nvidia.com/gpu figure): the API server refuses a pod asking for 2 whole
// GPUs, while the model's pod, asking for nvidia.com/gpu.shared as its
// pool's node advertises it, is bound by kube-scheduler to that node with
// its env.
func TestSharedReplicasKeptApartFromWholeGPUs(t *testing.T) {
	createNodes(t,
		gpuNode("shared-whole-0", "NVIDIA-H200", map[string]string{"outcome.gpuform.dev/group": "shared-whole", "nvidia.com/gpu.count": "2"}, map[string]string{"nvidia.com/gpu": "2"}),
		gpuNode("shared-ts-0", "NVIDIA-L4", map[string]string{"outcome.gpuform.dev/group": "shared-ts", "nvidia.com/gpu.count": "1"}, map[string]string{"nvidia.com/gpu.shared": "4"}),
	)
	apply(t, sharedConfig)
	ns := "shared-apps"
	ctx := context.Background()
	waitQuotaStatus(t, ns)
	rq, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "gpuform", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g, s := rq.Spec.Hard["requests.nvidia.com/gpu"], rq.Spec.Hard["requests.nvidia.com/gpu.shared"]; g.String() != "1" || s.String() != "4" {
		t.Errorf("ResourceQuota hard %v: want 1 nvidia.com/gpu and 4 nvidia.com/gpu.shared", rq.Spec.Hard)
	}

	two := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "two-whole", Namespace: ns}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"gpuform.dev/pool": "shared-whole"}, // the pool its quota is on
		Containers:   []corev1.Container{container(map[string]string{"nvidia.com/gpu": "2"})},
	}}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, two, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: gpuform") {
		t.Errorf("a pod asking for 2 whole GPUs with a quota of 1 (and 4 shared): %v, want exceeded quota", err)
	}

	pod := kservePod(t, ns, "embed")
	if q := pod.Spec.Containers[0].Resources.Limits["nvidia.com/gpu.shared"]; q.String() != "1" {
		t.Fatalf("the model's pod asks for %v, want 1 nvidia.com/gpu.shared", pod.Spec.Containers[0].Resources.Limits)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the model's pod: %v", err)
	}
	eventually(t, "the model's pod bound", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName != "", fmt.Sprintf("node %q, conditions %v", p.Spec.NodeName, p.Status.Conditions)
	})
	if p, _ := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); p.Spec.NodeName != "shared-ts-0" {
		t.Errorf("the model's pod is bound to %q, want the shared pool's node shared-ts-0", p.Spec.NodeName)
	}
	if env := modelEnv(t, ns, "embed"); env != "OMP_NUM_THREADS=2" {
		t.Errorf("the InferenceService's env is %q, want OMP_NUM_THREADS=2", env)
	}
}

// modelEnv is the env of InferenceService name's model as NAME=value,
// joined by commas.
func modelEnv(t *testing.T, ns, name string) string {
	t.Helper()
	list, _, _ := unstructured.NestedSlice(get(t, isvcGVR, ns, name).Object, "spec", "predictor", "model", "env")
	var out []string
	for _, e := range list {
		m, _ := e.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v", m["name"], m["value"]))
	}
	return strings.Join(out, ",")
}
