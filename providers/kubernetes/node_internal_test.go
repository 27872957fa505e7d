package kubernetes

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestGPUPodsCountsClaims: the pods using GPUs on a node are those asking
// for an nvidia.com resource and those holding ResourceClaims (DRA
// devices); a pod asking for neither, or one that ended, is not.
func TestGPUPodsCountsClaims(t *testing.T) {
	claim := "gpu-claim"
	pod := func(name string, phase corev1.PodPhase, res corev1.ResourceList, claims ...corev1.PodResourceClaim) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
			Spec: corev1.PodSpec{NodeName: "n0", ResourceClaims: claims,
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: res}}}},
			Status: corev1.PodStatus{Phase: phase},
		}
	}
	cs := fake.NewClientset(
		pod("plugin", corev1.PodRunning, corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}),
		pod("dra", corev1.PodRunning, nil, corev1.PodResourceClaim{Name: "gpu", ResourceClaimName: &claim}),
		pod("cpu", corev1.PodRunning, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}),
		pod("done", corev1.PodSucceeded, nil, corev1.PodResourceClaim{Name: "gpu", ResourceClaimName: &claim}),
	)
	got, err := (&Client{typed: cs}).GPUPods(t.Context(), []string{"n0"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"n0": {"team/dra", "team/plugin"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GPU pods %v, want %v", got, want)
	}
}
