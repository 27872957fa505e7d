package kubernetes

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuform/gpuform/engine"
)

// TestComputeEmptyQuota: with no quota controller at all (client-go's fake
// clientset), the proof of the stack's new ResourceQuota writes its status
// where nothing counts against it, and only there; it never rewrites a
// status already computed.
func TestComputeEmptyQuota(t *testing.T) {
	const ns = "team"
	gpus := corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("2"), "pods": resource.MustParse("10")}
	devices := corev1.ResourceList{"gpuform-h100.deviceclass.resource.k8s.io/devices": resource.MustParse("1")}
	quota := func(hard corev1.ResourceList, computed bool) *corev1.ResourceQuota {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: engine.QuotaName, Namespace: ns}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
		if computed {
			q.Status = corev1.ResourceQuotaStatus{Hard: hard.DeepCopy(), Used: corev1.ResourceList{}}
			for name := range hard {
				q.Status.Used[name] = resource.MustParse("1")
			}
		}
		return q
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns}}
	cases := []struct {
		name     string
		objects  []runtime.Object
		enforced bool
		// written: the proof wrote the status, hard its spec.hard and
		// usage zero.
		written bool
	}{
		{name: "no quota", enforced: true},
		{name: "empty namespace", objects: []runtime.Object{quota(gpus, false)}, enforced: true, written: true},
		{name: "empty namespace, device classes", objects: []runtime.Object{quota(devices, false)}, enforced: true, written: true},
		{name: "a pod", objects: []runtime.Object{quota(gpus, false), pod}},
		{name: "a claim, device classes", objects: []runtime.Object{quota(devices, false), claim}},
		{name: "a claim, no device classes", objects: []runtime.Object{quota(gpus, false), claim}, enforced: true, written: true},
		{name: "computed", objects: []runtime.Object{quota(gpus, true), pod}, enforced: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objects...)
			c := &Client{typed: cs}
			err := c.ProbeEnforced(t.Context(), ns, nil)
			var ne *engine.NotEnforcedError
			switch {
			case tc.enforced && err != nil:
				t.Fatalf("proof: %v, want enforced", err)
			case !tc.enforced && !errors.As(err, &ne):
				t.Fatalf("proof: %v, want a NotEnforcedError", err)
			}
			wrote := false
			for _, a := range cs.Actions() {
				wrote = wrote || (a.GetVerb() == "update" && a.GetSubresource() == "status")
			}
			if wrote != tc.written {
				t.Fatalf("status written: %v, want %v", wrote, tc.written)
			}
			if !tc.written {
				return
			}
			q, err := cs.CoreV1().ResourceQuotas(ns).Get(t.Context(), engine.QuotaName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range q.Spec.Hard {
				got, used := q.Status.Hard[name], q.Status.Used[name]
				if got.Cmp(want) != 0 || !used.IsZero() {
					t.Errorf("status of %s: hard %s used %s, want hard %s used 0", name, got.String(), used.String(), want.String())
				}
			}
		})
	}
}
